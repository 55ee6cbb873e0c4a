"""An LR-range test before training (`LRFinder` class with `range_test()` and `suggest()`,
restoring the initial weights afterwards), then a plain training loop at the suggested rate; a
deep narrow MLP (24 layers of width 64) on tabular data, SGD with momentum.

Planted: both loops clear gradients with `optimizer.zero_grad(set_to_none=False)` (copied from an
old tutorial), which fills every gradient tensor with zeros each step before backward writes it
again. --fixed: the default `zero_grad()` (set to None).
"""

import copy
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
SET_TO_NONE = FIXED


class LRFinder:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer
        self.state = copy.deepcopy(model.state_dict())
        self.history = []

    def range_test(self, batches, start=1e-5, end=1.0, steps=50):
        gamma = (end / start) ** (1 / steps)
        for group in self.optimizer.param_groups:
            group["lr"] = start
        for _, (x, y) in zip(range(steps), batches):
            loss = nn.functional.mse_loss(self.model(x), y)
            self.optimizer.zero_grad(set_to_none=SET_TO_NONE)
            loss.backward()
            self.optimizer.step()
            self.history.append((self.optimizer.param_groups[0]["lr"], loss.item()))
            for group in self.optimizer.param_groups:
                group["lr"] *= gamma
        self.model.load_state_dict(self.state)

    def suggest(self):
        best = min(self.history, key=lambda h: h[1])
        return best[0] / 10


def deep_mlp(d=64, depth=24):
    layers = [nn.Linear(16, d)]
    for _ in range(depth):
        layers += [nn.ReLU(), nn.Linear(d, d)]
    return nn.Sequential(*layers, nn.ReLU(), nn.Linear(d, 1))


def stream(x, y, g):
    while True:
        for idx in torch.randperm(len(x), generator=g).split(32):
            yield x[idx], y[idx]


if __name__ == "__main__":
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(8000, 16, generator=g)
    y = x[:, :4].sum(1, keepdim=True)
    model = deep_mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    batches = stream(x, y, g)
    finder = LRFinder(model, optimizer)
    finder.range_test(batches)
    for group in optimizer.param_groups:
        group["lr"] = finder.suggest()
    for step in range(1500):
        xb, yb = next(batches)
        loss = nn.functional.mse_loss(model(xb), yb)
        optimizer.zero_grad(set_to_none=SET_TO_NONE)
        loss.backward()
        optimizer.step()
        if step % 300 == 0:
            print(step, loss.item())
