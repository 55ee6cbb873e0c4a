"""A hand-written trainer with overridable hook methods in the Lightning style: `training_step`
returns the loss, the trainer calls `backward`, then `on_after_backward` (the user's hook for
gradient checks), then `optimizer_step`. The user's subclass logs the gradient norm in
`on_after_backward` and "resets the gradients for the next step" there.

Planted: `on_after_backward` ends with `self.optimizer.zero_grad()`, between the backward and the
optimizer's step, so every step applies no gradient. --fixed: the hook only logs; the trainer's
`zero_grad` runs before each step's backward as it always did.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class HookedTrainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer

    def training_step(self, batch):
        raise NotImplementedError

    def on_after_backward(self):
        pass

    def fit(self, batches, epochs):
        for epoch in range(epochs):
            for batch in batches():
                self.optimizer.zero_grad()
                loss = self.training_step(batch)
                loss.backward()
                self.on_after_backward()
                self.optimizer.step()
            print("epoch", epoch, loss.item())


class RegressionTrainer(HookedTrainer):
    def training_step(self, batch):
        xb, yb = batch
        return nn.functional.mse_loss(self.model(xb), yb)

    def on_after_backward(self):
        norms = [p.grad.norm() for p in self.model.parameters() if p.grad is not None]
        self.last_grad_norm = torch.stack(norms).norm()
        if not FIXED:
            self.optimizer.zero_grad()


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(5000, 24)
    y = x @ torch.randn(24, 1) + 0.1 * torch.randn(5000, 1)
    model = nn.Sequential(nn.Linear(24, 128), nn.ReLU(), nn.Linear(128, 1))

    def batches():
        perm = torch.randperm(len(x))
        for start in range(0, len(x), 64):
            idx = perm[start : start + 64]
            yield x[idx], y[idx]

    RegressionTrainer(model, torch.optim.Adam(model.parameters(), lr=1e-3)).fit(batches, 3)
