"""Gradient accumulation in a Trainer class: the author steps every `accum` micro-batches but
forgot to clear the gradients after the step.

Planted: no zero_grad anywhere (gradients add up across optimizer steps). --fixed: zero_grad
after each optimizer step.
"""

import sys

import torch
from torch import nn


class Trainer:
    def __init__(self, model, accum=2, clear=False):
        self.model, self.accum, self.clear = model, accum, clear
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, foreach=True)
        self.micro = 0

    def training_step(self, xb, yb):
        loss = nn.functional.cross_entropy(self.model(xb), yb) / self.accum
        loss.backward()
        self.micro += 1
        if self.micro % self.accum == 0:
            nn.utils.clip_grad_norm_(self.model.parameters(), 5.0)
            self.optimizer.step()
            if self.clear:
                self.optimizer.zero_grad(set_to_none=True)
        return loss.detach()

    def fit(self, x, y, epochs):
        for epoch in range(epochs):
            total = torch.zeros(())
            for xb, yb in zip(x.split(50), y.split(50)):
                total += self.training_step(xb, yb)
            print(f"epoch {epoch}: {total.item():.3f}")


if __name__ == "__main__":
    torch.manual_seed(0)
    x, y = torch.randn(3000, 30), torch.randint(0, 3, (3000,))
    net = nn.Sequential(nn.Linear(30, 128), nn.ReLU(), nn.Linear(128, 3))
    Trainer(net, clear="--fixed" in sys.argv).fit(x, y, epochs=3)
