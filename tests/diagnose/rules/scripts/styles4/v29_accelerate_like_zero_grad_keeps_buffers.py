"""An Accelerate-like training wrapper whose `AcceleratedOptimizer.zero_grad()` forwards to the
wrapped optimizer with set_to_none=False ("keep gradient buffers allocated", a habit from an old
CUDA-graphs recipe).

Planted: every step fills every gradient with zeros. --fixed: zero_grad() with PyTorch's default
(set_to_none=True).
"""

import sys

import torch
from torch import nn


class AcceleratedOptimizer:
    def __init__(self, optimizer, keep_buffers=True):
        self.optimizer, self.keep_buffers = optimizer, keep_buffers

    def step(self):
        self.optimizer.step()

    def zero_grad(self):
        if self.keep_buffers:
            self.optimizer.zero_grad(set_to_none=False)
        else:
            self.optimizer.zero_grad()


class Accelerator:
    def __init__(self, keep_buffers):
        self.keep_buffers = keep_buffers

    def prepare(self, model, optimizer):
        return model, AcceleratedOptimizer(optimizer, self.keep_buffers)

    def backward(self, loss):
        loss.backward()


def main():
    torch.manual_seed(0)
    accelerator = Accelerator(keep_buffers="--fixed" not in sys.argv)
    blocks = [nn.Sequential(nn.Linear(256, 256), nn.ReLU()) for _ in range(12)]
    model = nn.Sequential(nn.Linear(16, 256), *blocks, nn.Linear(256, 1))
    model, optimizer = accelerator.prepare(model, torch.optim.SGD(model.parameters(), lr=1e-3))
    x = torch.randn(4096, 16)
    y = x.sum(1, keepdim=True)
    for epoch in range(12):
        for xb, yb in zip(x.split(64), y.split(64)):
            loss = nn.functional.mse_loss(model(xb), yb)
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
