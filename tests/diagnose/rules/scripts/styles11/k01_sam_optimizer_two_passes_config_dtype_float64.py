"""Sharpness-aware minimization (SAM) written as an optimizer wrapper: each step climbs to the
worst-case weights (`first_step`), runs a second forward-backward there, comes back and lets the
base optimizer step (`second_step`). A config dataclass feeds `main(cfg)`. An MLP classifier on
generated tabular data.

Planted: the config's `dtype` field defaults to "float64" (copied from a numerics experiment),
and `main` does `model.to(getattr(torch, cfg.dtype))` and casts every batch the same way: both
passes of every step run in float64. --fixed: dtype "float32".
"""

import sys
from dataclasses import dataclass

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


@dataclass
class Config:
    dtype: str = "float32" if FIXED else "float64"
    rho: float = 0.05
    lr: float = 0.05
    steps: int = 400
    batch: int = 256


class SAM:
    def __init__(self, params, base, rho):
        self.params = [p for p in params if p.requires_grad]
        self.base = base
        self.rho = rho
        self.eps = []

    @torch.no_grad()
    def first_step(self):
        norm = torch.norm(torch.stack([p.grad.norm() for p in self.params]))
        scale = self.rho / (norm + 1e-12)
        self.eps = [p.grad * scale for p in self.params]
        for p, e in zip(self.params, self.eps):
            p.add_(e)
        self.base.zero_grad()

    @torch.no_grad()
    def second_step(self):
        for p, e in zip(self.params, self.eps):
            p.sub_(e)
        self.base.step()
        self.base.zero_grad()


def main(cfg):
    torch.manual_seed(0)
    dtype = getattr(torch, cfg.dtype)
    x = torch.randn(20000, 64)
    y = (x[:, :8].sum(1) > 0).long()
    model = nn.Sequential(nn.Linear(64, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 2)).to(dtype)
    opt = SAM(model.parameters(), torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=0.9),
              cfg.rho)
    for step in range(cfg.steps):
        idx = torch.randint(0, len(x), (cfg.batch,))
        xb, yb = x[idx].to(dtype), y[idx]
        nn.functional.cross_entropy(model(xb), yb).backward()
        opt.first_step()
        loss = nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        opt.second_step()
        if step % 100 == 0:
            print(step, float(loss))


if __name__ == "__main__":
    main(Config())
