"""A research loop that clears gradients through the module (`model.zero_grad(set_to_none=
False)`) "to keep the gradient buffers allocated", on a model of many mid-sized tensors.

Planted: every gradient is filled with zeros each step. --fixed: model.zero_grad() (set to
None).
"""

import sys

import torch
from torch import nn


def main():
    torch.manual_seed(0)
    blocks = []
    for _ in range(12):
        blocks += [nn.Linear(256, 256), nn.LayerNorm(256), nn.GELU()]
    model = nn.Sequential(nn.Linear(32, 256), *blocks, nn.Linear(256, 1))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9, foreach=True)
    keep_buffers = "--fixed" not in sys.argv
    x = torch.randn(4096, 32)
    y = x.pow(2).sum(1, keepdim=True)
    for epoch in range(3):
        for xb, yb in zip(x.split(16), y.split(16)):
            model.zero_grad(set_to_none=not keep_buffers)
            loss = nn.functional.mse_loss(model(xb), yb)
            loss.backward()
            opt.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
