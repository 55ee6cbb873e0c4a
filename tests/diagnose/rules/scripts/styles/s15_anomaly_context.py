"""The training function runs inside torch.autograd.detect_anomaly() (left from a debug session).

Planted: `with torch.autograd.detect_anomaly():` around the whole fit. --fixed: contextlib.nullcontext.
"""

import contextlib
import sys

import torch
from torch import nn


def fit(model, opt, data, epochs):
    for _ in range(epochs):
        for xb, yb in data:
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()


def main():
    torch.manual_seed(0)
    xs = torch.randn(3072, 40)
    ys = (xs[:, 0] > xs[:, 1]).long()
    model = nn.Sequential(nn.Linear(40, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                          nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    debug = contextlib.nullcontext() if "--fixed" in sys.argv else torch.autograd.detect_anomaly()
    with debug:
        fit(model, opt, list(zip(xs.split(48), ys.split(48))), epochs=3)


if __name__ == "__main__":
    main()
