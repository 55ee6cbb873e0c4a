"""Data comes from an endless generator function of shuffled batches; the batch size is 2 (kept
from a debugging session) for an MLP.

Planted: batch size 2: every step is per-op overhead. --fixed: batch size 256.
"""

import sys

import torch
from torch import nn


def batches(size, seed=0, pool=8192):
    """An endless generator of shuffled batches drawn from an in-memory pool."""
    g = torch.Generator().manual_seed(seed)
    xs = torch.randn(pool, 48, generator=g)
    ys = (xs @ torch.randn(48, generator=g) > 0).long()
    while True:
        for idx in torch.randperm(pool, generator=g).split(size):
            yield xs[idx], ys[idx]


def main():
    size = 256 if "--fixed" in sys.argv else 2
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(48, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                        nn.Linear(256, 2))
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9, foreach=True)
    samples = 0
    for step, (xb, yb) in enumerate(batches(size)):
        loss = nn.functional.cross_entropy(net(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        samples += len(xb)
        if samples >= 60_000:
            break
    print(f"{step + 1} steps, loss {loss.item():.3f}")


if __name__ == "__main__":
    main()
