"""A legacy torch.autograd.profiler.profile() block wraps the training run 'to look at it later'
and its table is printed at the end.

Planted: the autograd profiler records every op of every step. --fixed: no profiler.
"""

import contextlib
import sys

import torch
from torch import nn


def train(model, opt, data, epochs):
    for epoch in range(epochs):
        for xb, yb in data:
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"epoch {epoch}: {loss.item():.3f}")


def main():
    torch.manual_seed(0)
    model = nn.Sequential(*[m for _ in range(6) for m in (nn.Linear(64, 64), nn.ReLU())],
                          nn.Linear(64, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=True)
    x, y = torch.randn(4096, 64), torch.randint(0, 10, (4096,))
    data = list(zip(x.split(32), y.split(32)))
    fixed = "--fixed" in sys.argv
    prof_ctx = contextlib.nullcontext() if fixed else torch.autograd.profiler.profile()
    with prof_ctx as prof:
        train(model, opt, data, epochs=2)
    if prof is not None:
        print(prof.key_averages().table(row_limit=5))


if __name__ == "__main__":
    main()
