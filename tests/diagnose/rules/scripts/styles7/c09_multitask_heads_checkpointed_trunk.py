"""Multi-task learning: a shared trunk with three heads (regression, classification, a
reconstruction head), the loss a weighted sum with weights from a dict; small batches of
tabular-like vectors, nowhere near any memory limit.

Planted: the trunk's blocks run under `torch.utils.checkpoint.checkpoint` ("to save memory",
copied from a large-model recipe), so every block's forward runs twice per step. --fixed: the
blocks are called directly.
"""

import sys

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

FIXED = "--fixed" in sys.argv
IN = 96
WEIGHTS = {"reg": 1.0, "cls": 0.5, "rec": 0.1}


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ff = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        return x + self.ff(x)


class MultiTask(nn.Module):
    def __init__(self, d=128, depth=4):
        super().__init__()
        self.inp = nn.Linear(IN, d)
        self.blocks = nn.ModuleList(Block(d) for _ in range(depth))
        self.heads = nn.ModuleDict(
            {"reg": nn.Linear(d, 1), "cls": nn.Linear(d, 4), "rec": nn.Linear(d, IN)}
        )

    def forward(self, x):
        h = self.inp(x)
        for block in self.blocks:
            h = block(h) if FIXED else checkpoint(block, h, use_reentrant=False)
        return {name: head(h) for name, head in self.heads.items()}


def losses(out, x, y_reg, y_cls):
    return {
        "reg": nn.functional.mse_loss(out["reg"].squeeze(1), y_reg),
        "cls": nn.functional.cross_entropy(out["cls"], y_cls),
        "rec": nn.functional.mse_loss(out["rec"], x),
    }


if __name__ == "__main__":
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(16384, IN, generator=g)
    y_reg = x[:, :8].sum(1)
    y_cls = (x[:, 0] > 0).long() * 2 + (x[:, 1] > 0).long()
    model = MultiTask()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(3):
        for idx in torch.randperm(len(x), generator=g).split(128):
            parts = losses(model(x[idx]), x[idx], y_reg[idx], y_cls[idx])
            loss = sum(WEIGHTS[k] * v for k, v in parts.items())
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, {k: round(v.item(), 3) for k, v in parts.items()})
