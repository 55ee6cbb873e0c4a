"""A command-line tool with click-like decorators written by the author (`@command`,
`@option("--epochs", default=...)`), and a "safety checks" block guarded by `if __debug__:`
that the author believed only ran in debug builds. A small conv autoencoder on generated
images.

Planted: the `if __debug__:` block turns on `torch.autograd.set_detect_anomaly(True)`; but
`__debug__` is True in every normal `python script.py` run (only `python -O` makes it False),
so every training step runs with anomaly detection. --fixed: the checks are behind an explicit
`--check-nans` option, off by default.
"""

import functools
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def option(name, default):
    def wrap(fn):
        @functools.wraps(fn)
        def inner(**kwargs):
            key = name.lstrip("-").replace("-", "_")
            if name in sys.argv:
                kwargs[key] = type(default)(sys.argv[sys.argv.index(name) + 1])
            kwargs.setdefault(key, default)
            return fn(**kwargs)

        return inner

    return wrap


def command(fn):
    return lambda: fn()


@command
@option("--epochs", default=2)
@option("--lr", default=1e-3)
@option("--check-nans", default=0)
def train(epochs, lr, check_nans):
    if FIXED:
        if check_nans:
            torch.autograd.set_detect_anomaly(True)
    elif __debug__:
        torch.autograd.set_detect_anomaly(True)
    torch.manual_seed(0)
    images = torch.rand(2048, 1, 32, 32)
    model = nn.Sequential(nn.Conv2d(1, 16, 3, stride=2, padding=1), nn.ReLU(),
                          nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
                          nn.ConvTranspose2d(32, 16, 4, stride=2, padding=1), nn.ReLU(),
                          nn.ConvTranspose2d(16, 1, 4, stride=2, padding=1), nn.Sigmoid())
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    for epoch in range(epochs):
        for start in range(0, len(images), 64):
            batch = images[start : start + 64]
            loss = nn.functional.binary_cross_entropy(model(batch), batch)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, loss.item())


if __name__ == "__main__":
    train()
