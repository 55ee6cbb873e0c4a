"""A metrics helper class reads the loss with .item() on every step.

Planted: AverageMeter.update() calls .item() (a host sync) every step. --fixed: the meter keeps
a tensor and reads it once per epoch.
"""

import sys

import torch
from torch import nn


class AverageMeter:
    def __init__(self, eager):
        self.eager = eager
        self.reset()

    def reset(self):
        self.total, self.count = (0.0 if self.eager else torch.zeros(())), 0

    def update(self, value, n=1):
        if self.eager:
            self.total += value.item() * n
        else:
            self.total += value.detach() * n
        self.count += n

    @property
    def avg(self):
        return float(self.total) / max(self.count, 1)


def main():
    eager = "--fixed" not in sys.argv
    torch.manual_seed(0)
    xs, ys = torch.randn(4096, 32), torch.randint(0, 3, (4096,))
    model_fn = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 3))
    step_fn = torch.optim.SGD(model_fn.parameters(), lr=0.1)
    meter = AverageMeter(eager)
    for epoch in range(3):
        meter.reset()
        for xb, yb in zip(xs.split(64), ys.split(64)):
            loss = nn.functional.cross_entropy(model_fn(xb), yb)
            step_fn.zero_grad()
            loss.backward()
            step_fn.step()
            meter.update(loss, len(xb))
        print(f"epoch {epoch} loss {meter.avg:.3f}")


if __name__ == "__main__":
    main()
