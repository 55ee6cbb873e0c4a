"""Reptile meta-learning on generated sine-wave regression tasks: for each meta-step a task is
drawn, a task copy of the meta-model is adapted with a few SGD steps, and the meta-model's
weights move toward the adapted weights (`meta += eps * (task - meta)`).

Planted: the task copy is made with `copy.deepcopy(meta_model)` (and a new SGD optimizer) at
every meta-step: a whole model (and its module tree) is built anew each step. --fixed: one task
model and optimizer are built once and reset with `load_state_dict(meta_model.state_dict())`.
"""

import copy
import math
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def sample_task(generator):
    amp = torch.empty(1).uniform_(0.1, 5.0, generator=generator)
    phase = torch.empty(1).uniform_(0, math.pi, generator=generator)
    return lambda x: amp * torch.sin(x + phase)


if __name__ == "__main__":
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    meta_model = nn.Sequential(*[m for _ in range(6) for m in (nn.Linear(64, 64), nn.ReLU())])
    meta_model = nn.Sequential(nn.Linear(1, 64), nn.ReLU(), meta_model, nn.Linear(64, 1))
    task_model = copy.deepcopy(meta_model)
    task_opt = torch.optim.SGD(task_model.parameters(), lr=0.02)
    for meta_step in range(500):
        f = sample_task(gen)
        if FIXED:
            task_model.load_state_dict(meta_model.state_dict())
        else:
            task_model = copy.deepcopy(meta_model)
            task_opt = torch.optim.SGD(task_model.parameters(), lr=0.02)
        for _ in range(3):
            x = torch.empty(10, 1).uniform_(-5, 5, generator=gen)
            loss = nn.functional.mse_loss(task_model(x), f(x))
            task_opt.zero_grad()
            loss.backward()
            task_opt.step()
        eps = 0.1 * (1 - meta_step / 500)
        with torch.no_grad():
            for p_meta, p_task in zip(meta_model.parameters(), task_model.parameters()):
                p_meta.add_(p_task - p_meta, alpha=eps)
        if meta_step % 100 == 0:
            print(meta_step, loss.item())
