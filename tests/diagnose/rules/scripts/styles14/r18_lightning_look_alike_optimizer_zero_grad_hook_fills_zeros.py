"""A LightningModule look-alike whose tiny trainer calls the module's hooks in order:
`training_step`, `optimizer_zero_grad(epoch, batch_idx, optimizer)`, backward,
`optimizer_step`. The module overrides `optimizer_zero_grad`, as Lightning users do to change
how gradients are cleared. A wide MLP (large parameter tensors).

Planted: the override calls `optimizer.zero_grad(set_to_none=False)`: every step writes zeros
into ~6M gradient elements instead of dropping them.
--fixed: `optimizer.zero_grad()` (set_to_none, the default).
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(1024, 2048), nn.ReLU(), nn.Linear(2048, 2048), nn.ReLU(), nn.Linear(2048, 10)
        )

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)

    def optimizer_zero_grad(self, epoch, batch_idx, optimizer):
        if FIXED:
            optimizer.zero_grad()
        else:
            optimizer.zero_grad(set_to_none=False)

    def optimizer_step(self, epoch, batch_idx, optimizer):
        optimizer.step()


def fit(module, x, y, epochs, batch_size=16):
    opt = module.configure_optimizers()
    for epoch in range(epochs):
        for batch_idx, idx in enumerate(torch.randperm(len(x)).split(batch_size)):
            loss = module.training_step((x[idx], y[idx]), batch_idx)
            module.optimizer_zero_grad(epoch, batch_idx, opt)
            loss.backward()
            module.optimizer_step(epoch, batch_idx, opt)
        print("epoch", epoch, float(loss))


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(2048, 1024)
    y = x[:, :10].argmax(1)
    fit(Classifier(), x, y, epochs=3)
