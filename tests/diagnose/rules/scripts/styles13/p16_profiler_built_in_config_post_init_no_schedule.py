"""A run configuration as a dataclass whose `__post_init__` sets up "observability": a
`torch.profiler.profile` object (record_shapes, profile_memory) started there and stepped by
the training loop (`cfg.profiler.step()`), exported at the end.

Planted: the profiler has no `schedule`: without one, `step()` does not limit anything and
every op of every step is recorded (with shapes and memory) for the whole run. --fixed: no
profiler (`profile: bool = False`).
"""

import sys
from dataclasses import dataclass

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


@dataclass
class RunConfig:
    lr: float = 1e-3
    epochs: int = 3
    profile: bool = not FIXED

    def __post_init__(self):
        self.profiler = None
        if self.profile:
            self.profiler = torch.profiler.profile(
                activities=[torch.profiler.ProfilerActivity.CPU],
                record_shapes=True,
                profile_memory=True,
            )
            self.profiler.start()

    def step(self):
        if self.profiler is not None:
            self.profiler.step()

    def close(self):
        if self.profiler is not None:
            self.profiler.stop()


if __name__ == "__main__":
    torch.manual_seed(0)
    cfg = RunConfig()
    model = nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(8, 8, 3, padding=1),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(8 * 16 * 16, 10),
    )
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    x = torch.randn(4096, 1, 16, 16)
    y = (x.mean((1, 2, 3)) * 10).long().clamp(0, 9)
    for epoch in range(cfg.epochs):
        for idx in torch.randperm(len(x)).split(64):
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            cfg.step()
        print("epoch", epoch, float(loss))
    cfg.close()
