"""A tiny Lightning-like framework: a LightningModule-style class and a Fit loop that calls
training_step / validation_step. The framework's validation loop forgets to turn autograd off.

Planted: validation loop runs validation_step with autograd on (no no_grad / inference_mode).
--fixed: the framework wraps validation in torch.inference_mode().
"""

import contextlib
import sys

import torch
from torch import nn


class LitRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(64, 512), nn.Tanh(), nn.Linear(512, 512), nn.Tanh(),
                                 nn.Linear(512, 1))

    def training_step(self, batch):
        x, y = batch
        return nn.functional.mse_loss(self.net(x).squeeze(-1), y)

    def validation_step(self, batch):
        x, y = batch
        return nn.functional.l1_loss(self.net(x).squeeze(-1), y)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3, foreach=True)


class MiniTrainer:
    def __init__(self, max_epochs, fixed):
        self.max_epochs = max_epochs
        self.fixed = fixed

    def fit(self, module, train_batches, val_batches):
        opt = module.configure_optimizers()
        for epoch in range(self.max_epochs):
            module.train()
            for batch in train_batches:
                loss = module.training_step(batch)
                opt.zero_grad()
                loss.backward()
                opt.step()
            module.eval()
            guard = torch.inference_mode() if self.fixed else contextlib.nullcontext()
            with guard:
                errors = [module.validation_step(b) for b in val_batches]
            print(f"epoch {epoch}: val mae {torch.stack(errors).mean().item():.4f}")


def batches(x, y, size):
    return list(zip(x.split(size), y.split(size)))


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(9000, 64)
    y = x[:, :8].sum(1) + 0.1 * torch.randn(9000)
    MiniTrainer(max_epochs=4, fixed="--fixed" in sys.argv).fit(
        LitRegressor(), batches(x[:1500], y[:1500], 50), batches(x[1500:], y[1500:], 500)
    )
