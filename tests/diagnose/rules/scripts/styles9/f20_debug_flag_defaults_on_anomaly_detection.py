"""A script configured through `argparse` with a `--debug/--no-debug` boolean flag; in debug mode
it turns on autograd anomaly detection so a NaN would point at the op that made it. A small
conv net on generated images with label smoothing.

Planted: the flag's default is `True` (`BooleanOptionalAction`, default=True), so an ordinary
run trains under `torch.autograd.set_detect_anomaly(True)`: every backward records and checks
each op. --fixed: default False.
"""

import argparse
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--debug", action=argparse.BooleanOptionalAction, default=not FIXED)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--fixed", action="store_true")
    args = parser.parse_args()
    torch.autograd.set_detect_anomaly(args.debug)
    torch.manual_seed(0)
    x = torch.randn(4000, 3, 16, 16)
    y = (x[:, 0].mean((1, 2)) > 0).long()
    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 16, 3),
                          nn.ReLU(), nn.AdaptiveAvgPool2d(4), nn.Flatten(), nn.Linear(256, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(args.epochs):
        perm = torch.randperm(len(x))
        for start in range(0, len(x), 64):
            idx = perm[start : start + 64]
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx], label_smoothing=0.1)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, loss.item())
