"""torch.profiler.profile left around the training function (with a schedule and record_shapes).

Planted: the profiler records every step. --fixed: no profiler.
"""

import contextlib
import sys

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile


def train(model, opt, batches, epochs, prof=None):
    for _ in range(epochs):
        for xb, yb in batches:
            opt.zero_grad()
            nn.functional.cross_entropy(model(xb), yb).backward()
            opt.step()
            if prof is not None:
                prof.step()


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                          nn.Linear(64, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = torch.randn(3072, 32), torch.randint(0, 4, (3072,))
    batches = list(zip(x.split(32), y.split(32)))
    if "--fixed" in sys.argv:
        ctx = contextlib.nullcontext()
    else:
        ctx = profile(activities=[ProfilerActivity.CPU], record_shapes=True)
    with ctx as prof:
        train(model, opt, batches, 3, prof)


if __name__ == "__main__":
    main()
