"""Gradient clipping written by hand: for each parameter the author reads the gradient norm as a
Python float and rescales the gradient if it is above the threshold (per-parameter clipping, the
way an old paper's code did it).

Planted: one host read (`.item()`) per parameter tensor per step. --fixed: clip_grad_norm_ over
all parameters, no host read.
"""

import sys

import torch
from torch import nn

MAX_NORM = 0.5


def clip_gradients(model):
    if "--fixed" in sys.argv:
        nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)
        return
    for p in model.parameters():
        norm = p.grad.norm().item()
        if norm > MAX_NORM:
            p.grad.mul_(MAX_NORM / norm)


def main():
    torch.manual_seed(0)
    layers = []
    for _ in range(8):
        layers += [nn.Linear(96, 96), nn.LayerNorm(96), nn.ReLU()]
    model = nn.Sequential(*layers, nn.Linear(96, 5))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = torch.randn(8192, 96), torch.randint(0, 5, (8192,))
    for epoch in range(3):
        for xb, yb in zip(x.split(64), y.split(64)):
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            clip_gradients(model)
            opt.step()
        print("epoch", epoch, loss.item())


if __name__ == "__main__":
    main()
