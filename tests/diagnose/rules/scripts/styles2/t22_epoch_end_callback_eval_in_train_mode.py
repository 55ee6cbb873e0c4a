"""Keras-like callbacks: an on_epoch_end callback computes validation accuracy. It wraps the
forward in torch.no_grad() but never switches the BatchNorm/Dropout model to eval mode.

Planted: validation in train mode. --fixed: model.eval() ... model.train() around it.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class Callback:
    def on_epoch_end(self, epoch, model):
        pass


class ValAccuracy(Callback):
    def __init__(self, x, y):
        self.x, self.y = x, y

    def on_epoch_end(self, epoch, model):
        if FIXED:
            model.eval()
        with torch.inference_mode():
            acc = (model(self.x).argmax(1) == self.y).float().mean()
        if FIXED:
            model.train()
        print(f"epoch {epoch}: val acc {acc.item():.3f}")


def fit(model, opt, x, y, epochs, callbacks):
    model.train()
    for epoch in range(epochs):
        for idx in torch.randperm(len(x)).split(64):
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        for cb in callbacks:
            cb.on_epoch_end(epoch, model)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(4000, 24)
    y = (x[:, :4].sum(1) > 0).long()
    model = nn.Sequential(nn.Linear(24, 128), nn.BatchNorm1d(128), nn.ReLU(), nn.Dropout(0.3),
                          nn.Linear(128, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=True)
    fit(model, opt, x[:2000], y[:2000], 4, [ValAccuracy(x[2000:], y[2000:])])
