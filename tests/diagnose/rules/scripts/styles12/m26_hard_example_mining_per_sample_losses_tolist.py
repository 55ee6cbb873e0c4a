"""Online hard-example mining: each step computes per-sample losses, keeps the hardest half
(by sorting them) and backpropagates only those. A small CNN on generated 28x28 images.

Planted: the hardest samples are picked in Python: `losses.tolist()`, `sorted(range(n),
key=...)` and a list of indices: the step waits for the forward to finish to read the losses on
the host (a device-to-host sync on an accelerator). --fixed: `losses.topk(k).indices` keeps it
all on the device.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(6000, 1, 28, 28)
    y = (x[:, 0, :14].mean((1, 2)) > 0).long()
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(32, 2),
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(2):
        for idx in torch.randperm(len(x)).split(128):
            losses = nn.functional.cross_entropy(model(x[idx]), y[idx], reduction="none")
            k = len(idx) // 2
            if FIXED:
                hard = losses.topk(k).indices
            else:
                values = losses.tolist()
                hard = torch.tensor(sorted(range(len(values)), key=lambda i: -values[i])[:k])
            loss = losses[hard].mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
