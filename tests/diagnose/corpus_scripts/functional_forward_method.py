"""Meta-learning (MAML) with a model whose forward is functional: `model.adapted(x, weights)`
runs `F.linear` on weights passed in (clones of the model's parameters, moved by inner gradient
steps), calls no submodule, and the model itself is never called in training. An outer Adam
steps the model's parameters on the tasks' summed query losses (`autograd.grad`)."""

import math

import torch
import torch.nn.functional as F
from torch import nn

TASKS, SHOTS, INNER_LR = 8, 10, 0.01


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(1, 40), nn.ReLU(), nn.Linear(40, 40), nn.ReLU(),
                                  nn.Linear(40, 1))  # fmt: skip

    def forward(self, x):
        return self.body(x)

    def adapted(self, x, weights):
        x = F.relu(F.linear(x, weights[0], weights[1]))
        x = F.relu(F.linear(x, weights[2], weights[3]))
        return F.linear(x, weights[4], weights[5])


def task_batch(amplitude, phase):
    x = torch.rand(SHOTS, 1) * 10 - 5
    return x, amplitude * torch.sin(x + phase)


torch.manual_seed(0)
model = Regressor()
weights = list(model.parameters())
meta_opt = torch.optim.Adam(weights, lr=1e-3)
for _ in range(400):
    meta_loss = 0
    for _ in range(TASKS):
        amplitude, phase = 0.1 + 4.9 * torch.rand(()).item(), math.pi * torch.rand(()).item()
        fast = [w.clone() for w in weights]
        x, y = task_batch(amplitude, phase)
        grads = torch.autograd.grad(F.mse_loss(model.adapted(x, fast), y), fast)
        fast = [w - INNER_LR * g for w, g in zip(fast, grads)]
        x, y = task_batch(amplitude, phase)
        meta_loss = meta_loss + F.mse_loss(model.adapted(x, fast), y)
    meta_grads = torch.autograd.grad(meta_loss, weights)
    for w, g in zip(weights, meta_grads):
        w.grad = g
    meta_opt.step()
