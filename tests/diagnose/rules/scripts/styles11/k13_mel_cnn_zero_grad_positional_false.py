"""A keyword-spotting model over mel-like spectrogram patches (generated): a small 2D conv front
end with BatchNorm and a wide fully connected classifier (4.5M parameters), trained with Adam. A plain loop in a `train_one_epoch(model, opt, data)` function.

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
    model = nn.Sequential(conv(1, 8), nn.MaxPool2d(2), conv(8, 16), nn.Flatten(),
                          nn.Linear(16 * 20 * 16, 768), nn.ReLU(), nn.Linear(768, 768), nn.ReLU(),
                          nn.Linear(768, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(4):
        print("epoch", epoch, train_one_epoch(model, opt, specs, labels))
