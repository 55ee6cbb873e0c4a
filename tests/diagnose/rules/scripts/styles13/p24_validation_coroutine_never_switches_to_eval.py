"""Validation as a coroutine that accumulates a metric: `meter = val_coroutine(model)` is
primed, each validation batch is `send`-ed in, and `meter.send(None)` returns the mean. A
time-series classifier with Dropout and BatchNorm over windows of a generated multichannel
signal.

Planted: the coroutine runs its forwards under `torch.no_grad()` but the model is never put in
`eval()` mode: Dropout drops activations and BatchNorm uses (and updates) batch statistics
during validation. --fixed: `model.eval()` when the coroutine starts, `model.train()` when it
returns.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def val_coroutine(model):
    if FIXED:
        model.eval()
    total, count = 0.0, 0
    while True:
        batch = yield
        if batch is None:
            break
        x, y = batch
        with torch.no_grad():
            total += float((model(x).argmax(1) == y).sum())
            count += len(y)
    if FIXED:
        model.train()
    yield total / count


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(6000, 6, 64)
    y = (x[:, 0, :8].mean(1) > 0).long()
    model = nn.Sequential(
        nn.Conv1d(6, 32, 5),
        nn.BatchNorm1d(32),
        nn.ReLU(),
        nn.Dropout(0.3),
        nn.AdaptiveAvgPool1d(1),
        nn.Flatten(),
        nn.Linear(32, 2),
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(4):
        for idx in torch.randperm(4000).split(64):
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        meter = val_coroutine(model)
        next(meter)
        for i in range(4000, 6000, 250):
            meter.send((x[i : i + 250], y[i : i + 250]))
        print("epoch", epoch, float(loss), meter.send(None))
