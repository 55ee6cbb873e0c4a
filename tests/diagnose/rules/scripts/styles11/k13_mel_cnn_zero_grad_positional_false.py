"""A keyword-spotting CNN over mel-like spectrogram patches (generated), a 2D conv net with
BatchNorm, trained with Adam. A plain loop in a `train_one_epoch(model, opt, data)` function.

Planted: the loop calls `opt.zero_grad(False)`, the positional form of
`set_to_none=False` (a habit from an old codebase): every gradient tensor is kept and filled
with zeros each step, then accumulated into. --fixed: `opt.zero_grad()` (set to None).
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def conv(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU())


def train_one_epoch(model, opt, specs, labels):
    perm = torch.randperm(len(specs))
    for idx in perm.split(64):
        loss = nn.functional.cross_entropy(model(specs[idx]), labels[idx])
        if FIXED:
            opt.zero_grad()
        else:
            opt.zero_grad(False)
        loss.backward()
        opt.step()
    return float(loss)


if __name__ == "__main__":
    torch.manual_seed(0)
    specs = torch.randn(3000, 1, 40, 32)
    labels = (specs[:, 0, :10].mean((1, 2)) * 10).long().clamp(-5, 4) + 5
    model = nn.Sequential(conv(1, 16), conv(16, 16), nn.MaxPool2d(2), conv(16, 32), conv(32, 32),
                          nn.MaxPool2d(2), conv(32, 64), conv(64, 64), nn.AdaptiveAvgPool2d(1),
                          nn.Flatten(), nn.Linear(64, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(4):
        print("epoch", epoch, train_one_epoch(model, opt, specs, labels))
