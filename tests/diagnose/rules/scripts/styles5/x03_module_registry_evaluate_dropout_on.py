"""An `nn.Module` registry with a factory (`create("resmlp", **kwargs)`), a tabular regression
model with Dropout in every block, and an `Experiment` class whose `evaluate()` runs the
validation batches under `torch.no_grad()` but never switches the model to eval mode.

Planted: validation forwards run with Dropout active (train mode). --fixed: evaluate() calls
model.eval() and train() after.
"""

import sys

import torch
from torch import nn

REGISTRY = {}
FIXED = "--fixed" in sys.argv


def create(name, **kwargs):
    return REGISTRY[name](**kwargs)


class ResBlock(nn.Module):
    def __init__(self, dim, p):
        super().__init__()
        self.body = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim), nn.SiLU(), nn.Dropout(p))

    def forward(self, x):
        return x + self.body(x)


class ResMLP(nn.Module):
    def __init__(self, features, depth=4, dim=128, p=0.2):
        super().__init__()
        self.inp = nn.Linear(features, dim)
        self.blocks = nn.Sequential(*[ResBlock(dim, p) for _ in range(depth)])
        self.out = nn.Linear(dim, 1)

    def forward(self, x):
        return self.out(self.blocks(self.inp(x))).squeeze(-1)


REGISTRY["resmlp"] = ResMLP


class Experiment:
    def __init__(self, model, lr=1e-3):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)

    def train_epoch(self, x, y, batch=128):
        for i in range(0, len(x), batch):
            pred = self.model(x[i:i + batch])
            loss = nn.functional.mse_loss(pred, y[i:i + batch])
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
        return loss.item()

    def evaluate(self, x, y, batch=512):
        if FIXED:
            self.model.eval()
        with torch.no_grad():
            errors = [nn.functional.mse_loss(self.model(x[i:i + batch]), y[i:i + batch])
                      for i in range(0, len(x), batch)]
        self.model.train()
        return torch.stack(errors).mean().item()


def main():
    torch.manual_seed(0)
    w = torch.randn(32)
    x, xv = torch.randn(8192, 32), torch.randn(2048, 32)
    y, yv = x @ w + 0.1 * torch.randn(8192), xv @ w
    exp = Experiment(create("resmlp", features=32))
    for epoch in range(3):
        train_loss = exp.train_epoch(x, y)
        print(epoch, train_loss, exp.evaluate(xv, yv))


if __name__ == "__main__":
    main()
