"""Gradient monitoring through tensor hooks: every parameter gets `register_hook` with a function
that appends the gradient's norm as a Python float (`.item()`) to a per-parameter list, so each
backward reads back one number per parameter tensor.

Planted: a host read per parameter in every backward. --fixed: the hooks keep detached norms
and the monitor reads them once per 100 steps.
"""

import sys
from collections import defaultdict

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
NORMS = defaultdict(list)


def watch(name):
    def hook(grad):
        norm = grad.detach().norm()
        NORMS[name].append(norm if FIXED else norm.item())
    return hook


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 192), nn.ReLU(), nn.Linear(192, 192), nn.ReLU(),
                          nn.Linear(192, 192), nn.ReLU(), nn.Linear(192, 2))
    for name, p in model.named_parameters():
        p.register_hook(watch(name))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(12800, 32), torch.randint(0, 2, (12800,))
    for epoch in range(3):
        for step, (xb, yb) in enumerate(zip(x.split(64), y.split(64))):
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step % 100 == 99:
                print(step, {k: round(float(v[-1]), 3) for k, v in NORMS.items()})
                NORMS.clear()


if __name__ == "__main__":
    main()
