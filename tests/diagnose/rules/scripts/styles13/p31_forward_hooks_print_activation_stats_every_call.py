"""Activation monitoring with `register_forward_hook` on every layer of a CNN: each hook prints
the layer's name, output shape and mean/std ("to spot dead layers"), the way a quick debugging
session leaves it.

Planted: the hooks stay registered for the whole training and `print` a line (formatted from
two tensor reductions) for every layer on every forward: 9 formatted prints per step.
--fixed: the hooks are removed after the first step.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def make_hook(name):
    def hook(module, inputs, output):
        print(f"{name:>10} {tuple(output.shape)} mean={output.mean():.4f} std={output.std():.4f}")

    return hook


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(8, 8, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(16 * 8 * 8, 10),
    )
    handles = [
        m.register_forward_hook(make_hook(f"{i}:{type(m).__name__}")) for i, m in enumerate(model)
    ]
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(4096, 1, 16, 16)
    y = (x[:, 0, :4, :4].mean((1, 2)) * 10).long().clamp(-5, 4) + 5
    for epoch in range(3):
        for idx in torch.randperm(len(x)).split(32):
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            if FIXED and handles:
                for h in handles:
                    h.remove()
                handles = []
        print("epoch", epoch, float(loss))
