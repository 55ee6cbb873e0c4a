"""Clean: Reptile meta-learning on generated sine-wave tasks with one task model and one inner
optimizer built once, reset from the meta-model with `load_state_dict` at each meta-step,
adapted with a few SGD steps on 32-point batches, and the meta-update done with `torch._foreach`
ops under `torch.no_grad()`.

No planted problem; `--fixed` changes nothing (kept for the bench's control run).
"""

import copy
import math

import torch
from torch import nn

if __name__ == "__main__":
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    meta_model = nn.Sequential(nn.Linear(1, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                               nn.Linear(128, 1))
    task_model = copy.deepcopy(meta_model)
    task_opt = torch.optim.SGD(task_model.parameters(), lr=0.02)
    meta_params, task_params = list(meta_model.parameters()), list(task_model.parameters())
    for meta_step in range(400):
        amp = torch.empty(1).uniform_(0.1, 5.0, generator=gen)
        phase = torch.empty(1).uniform_(0, math.pi, generator=gen)
        task_model.load_state_dict(meta_model.state_dict())
        for _ in range(4):
            x = torch.empty(32, 1).uniform_(-5, 5, generator=gen)
            loss = nn.functional.mse_loss(task_model(x), amp * torch.sin(x + phase))
            task_opt.zero_grad(set_to_none=True)
            loss.backward()
            task_opt.step()
        with torch.no_grad():
            delta = torch._foreach_sub(task_params, meta_params)
            torch._foreach_add_(meta_params, delta, alpha=0.1 * (1 - meta_step / 400))
        if meta_step % 100 == 0:
            print(meta_step, loss.item())
