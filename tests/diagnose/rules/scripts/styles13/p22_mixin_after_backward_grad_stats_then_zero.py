"""A trainer assembled from mixins, with a `MonitorMixin.after_backward()` that records gradient
statistics for a dashboard (norm per layer, summed into a tensor kept on device). A conv net.

Planted: `after_backward()` ends with `self.model.zero_grad()` ("reset for the next
measurement"), and the loop calls it between `loss.backward()` and `opt.step()`: the optimizer
then steps with no gradients and the model never learns. --fixed: the monitor does not clear.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class MonitorMixin:
    def after_backward(self):
        norms = [p.grad.norm() for p in self.model.parameters() if p.grad is not None]
        self.grad_norm = torch.stack(norms).sum()
        if not FIXED:
            self.model.zero_grad()


class LoopMixin:
    def fit(self, x, y, epochs):
        for epoch in range(epochs):
            for idx in torch.randperm(len(x)).split(64):
                loss = nn.functional.cross_entropy(self.model(x[idx]), y[idx])
                self.opt.zero_grad()
                loss.backward()
                self.after_backward()
                self.opt.step()
            print("epoch", epoch, float(loss), float(self.grad_norm))


class Trainer(MonitorMixin, LoopMixin):
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=1e-3)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(32, 10),
    )
    x = torch.randn(2048, 1, 16, 16)
    y = (x[:, 0, :4, :4].mean((1, 2)) * 20).long().clamp(-5, 4) + 5
    Trainer(model).fit(x, y, 3)
