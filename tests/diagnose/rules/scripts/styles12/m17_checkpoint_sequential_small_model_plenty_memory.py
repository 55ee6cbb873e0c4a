"""A deep MLP classifier whose forward goes through `torch.utils.checkpoint.checkpoint_sequential`
(the "memory efficient" flag of a model zoo's builder, on by default). Batches of 256 on a
machine with gigabytes of free memory: the activations of this model take a few megabytes.

Planted: with checkpoint_sequential over 4 segments, every segment's forward is run again during
backward, about a third more compute per step, to save memory that is not needed.
--fixed: `memory_efficient=False`, the plain forward.
"""

import sys

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint_sequential

FIXED = "--fixed" in sys.argv


class DeepMLP(nn.Module):
    def __init__(self, width=384, depth=8, memory_efficient=True):
        super().__init__()
        layers = [nn.Linear(64, width), nn.GELU()]
        for _ in range(depth):
            layers += [nn.Linear(width, width), nn.GELU()]
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(width, 10)
        self.memory_efficient = memory_efficient

    def forward(self, x):
        if self.memory_efficient and self.training:
            h = checkpoint_sequential(self.body, 4, x, use_reentrant=False)
        else:
            h = self.body(x)
        return self.head(h)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(8192, 64)
    y = (x[:, :10] ** 2).argmax(1)
    model = DeepMLP(memory_efficient=not FIXED)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(3):
        for idx in torch.randperm(len(x)).split(256):
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
