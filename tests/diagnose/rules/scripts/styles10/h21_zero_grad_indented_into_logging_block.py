"""A plain script with a logging block every `log_every` steps (loss, learning rate, gradient
norm) and a step-decay scheduler. A small residual MLP regressor on generated data.

Planted: `optimizer.zero_grad()` sits one indentation level too deep, inside the
`if step % log_every == 0:` block (after the gradient norm is logged): gradients are cleared
once every 50 steps and accumulate over all the others. --fixed: `zero_grad()` runs every step.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class ResMLP(nn.Module):
    def __init__(self, dim=128, depth=4):
        super().__init__()
        self.inp = nn.Linear(20, dim)
        self.blocks = nn.ModuleList(nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim),
                                                  nn.GELU()) for _ in range(depth))
        self.out = nn.Linear(dim, 1)

    def forward(self, x):
        h = self.inp(x)
        for block in self.blocks:
            h = h + block(h)
        return self.out(h)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(20000, 20)
    y = (x[:, :5] ** 2).sum(1, keepdim=True)
    model = ResMLP()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=200, gamma=0.5)
    log_every = 50
    for step in range(600):
        idx = torch.randint(0, len(x), (128,))
        loss = nn.functional.mse_loss(model(x[idx]), y[idx])
        if FIXED:
            optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        if step % log_every == 0:
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), float("inf"))
            print(step, loss.item(), scheduler.get_last_lr()[0], norm.item())
            if not FIXED:
                optimizer.zero_grad()
