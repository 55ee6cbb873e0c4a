"""A deep narrow residual MLP (many small parameter tensors) with foreach=False on the optimizer.

Planted: torch.optim.AdamW(..., foreach=False): one Python-level pass per tensor. --fixed: fused.
"""

import sys

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return x + self.fc(torch.relu(self.norm(x)))


def main():
    torch.manual_seed(0)
    deep = nn.Sequential(nn.Linear(16, 32), *[Block(32) for _ in range(24)], nn.Linear(32, 1))
    kwargs = {"fused": True} if "--fixed" in sys.argv else {"foreach": False}
    opt = torch.optim.AdamW(deep.parameters(), lr=1e-3, **kwargs)
    x = torch.randn(2048, 16)
    y = x.prod(1, keepdim=True)
    for _ in range(3):
        for xb, yb in zip(x.split(64), y.split(64)):
            opt.zero_grad(set_to_none=True)
            nn.functional.mse_loss(deep(xb), yb).backward()
            opt.step()


if __name__ == "__main__":
    main()
