"""A Lightning-like module with a `self.log(name, value)` method that stores the logged values in
a dict of lists for `on_train_epoch_end` to average; `training_step` logs the loss tensor itself.

Planted: every step's loss kept with its autograd graph until the epoch ends (memory grows
with every step). --fixed: log() stores value.detach().
"""

import sys
from collections import defaultdict

import torch
from torch import nn


class LitRegressor(nn.Module):
    def __init__(self, detach_logs):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(24, 512), nn.SiLU(), nn.Linear(512, 512), nn.SiLU(),
                                   nn.Linear(512, 1))
        self.detach_logs = detach_logs
        self.logged = defaultdict(list)

    def log(self, name, value):
        self.logged[name].append(value.detach() if self.detach_logs else value)

    def training_step(self, batch):
        x, y = batch
        loss = nn.functional.mse_loss(self.model(x).squeeze(1), y)
        self.log("train_loss", loss)
        return loss

    def on_train_epoch_end(self, epoch):
        mean = torch.stack(self.logged.pop("train_loss")).mean()
        print(f"epoch {epoch} train_loss {mean.item():.4f}")


def fit(module, batches, epochs):
    opt = torch.optim.Adam(module.parameters(), lr=1e-3)
    for epoch in range(epochs):
        for batch in batches:
            loss = module.training_step(batch)
            opt.zero_grad()
            loss.backward()
            opt.step()
        module.on_train_epoch_end(epoch)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(32768, 24)
    y = x.pow(2).sum(1)
    batches = list(zip(x.split(64), y.split(64)))
    fit(LitRegressor(detach_logs="--fixed" in sys.argv), batches, epochs=1)
