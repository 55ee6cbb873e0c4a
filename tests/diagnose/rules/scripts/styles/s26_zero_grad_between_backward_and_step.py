"""Siamese-style embedding model; zero_grad() sits between backward() and step().

Planted: loss.backward(); opt.zero_grad(); opt.step(): every gradient is dropped before the
update. --fixed: zero_grad() before the forward.
"""

import sys

import torch
from torch import nn


def contrastive(a, b, same, margin=1.0):
    d = (a - b).pow(2).sum(1).sqrt()
    return (same * d.pow(2) + (1 - same) * torch.relu(margin - d).pow(2)).mean()


def main():
    late_zero = "--fixed" not in sys.argv
    torch.manual_seed(0)
    encoder = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 16))
    opt = torch.optim.SGD(encoder.parameters(), lr=0.01, momentum=0.9)
    left, right = torch.randn(4096, 32), torch.randn(4096, 32)
    same = (torch.rand(4096) > 0.5).float()
    for _ in range(3):
        for a, b, s in zip(left.split(64), right.split(64), same.split(64)):
            if not late_zero:
                opt.zero_grad()
            loss = contrastive(encoder(a), encoder(b), s)
            loss.backward()
            if late_zero:
                opt.zero_grad()
            opt.step()


if __name__ == "__main__":
    main()
