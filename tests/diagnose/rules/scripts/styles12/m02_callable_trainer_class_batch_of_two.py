"""Training written as a callable object: `Step.__call__(batch)` does forward, backward and the
optimizer step, and the loop is `for batch in batches: losses.append(step(batch))`. A wide MLP
on generated 256-feature data.

Planted: the batches come from `split(cfg.batch)` with `batch=2` (a value meant for debugging
left in the default): each step multiplies a 2-row matrix by 1024x1024 weights, so the
per-step overhead dominates. --fixed: batch 128.
"""

import sys
from dataclasses import dataclass

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


@dataclass
class Cfg:
    batch: int = 128 if FIXED else 2
    lr: float = 1e-3
    epochs: int = 2


class Step:
    def __init__(self, model, lr):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)

    def __call__(self, batch):
        x, y = batch
        loss = nn.functional.cross_entropy(self.model(x), y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.detach()


if __name__ == "__main__":
    torch.manual_seed(0)
    cfg = Cfg()
    x = torch.randn(4096 if FIXED else 1200, 256)
    y = (x[:, 0] > 0).long()
    model = nn.Sequential(
        nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 2)
    )
    step = Step(model, cfg.lr)
    for epoch in range(cfg.epochs):
        losses = []
        for idx in torch.randperm(len(x)).split(cfg.batch):
            losses.append(step((x[idx], y[idx])))
        print("epoch", epoch, float(torch.stack(losses).mean()))
