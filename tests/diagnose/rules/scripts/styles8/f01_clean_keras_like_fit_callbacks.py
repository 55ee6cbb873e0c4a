"""Clean: a Keras-like `Sequential`-style wrapper with `fit(..., callbacks=[...])`: an
`EarlyStopping` callback on validation loss and a `ModelCheckpoint` callback that saves the best
weights at the end of an epoch (into a temporary folder). A tabular MLP classifier."""

import os
import sys
import tempfile

import torch
from torch import nn


class EarlyStopping:
    def __init__(self, patience=2):
        self.patience, self.best, self.bad = patience, float("inf"), 0

    def on_epoch_end(self, model, logs):
        if logs["val_loss"] < self.best - 1e-4:
            self.best, self.bad = logs["val_loss"], 0
        else:
            self.bad += 1
        model.stop_training = self.bad >= self.patience


class ModelCheckpoint:
    def __init__(self, path):
        self.path, self.best = path, float("inf")

    def on_epoch_end(self, model, logs):
        if logs["val_loss"] < self.best:
            self.best = logs["val_loss"]
            torch.save(model.net.state_dict(), self.path)


class Model:
    def __init__(self, net, lr=1e-3):
        self.net, self.stop_training = net, False
        self.opt = torch.optim.Adam(net.parameters(), lr=lr)

    def fit(self, x, y, x_val, y_val, epochs, batch_size, callbacks=()):
        for epoch in range(epochs):
            self.net.train()
            for idx in torch.randperm(len(x)).split(batch_size):
                loss = nn.functional.cross_entropy(self.net(x[idx]), y[idx])
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
            self.net.eval()
            with torch.no_grad():
                logs = {
                    "loss": loss.item(),
                    "val_loss": nn.functional.cross_entropy(self.net(x_val), y_val).item(),
                }
            for cb in callbacks:
                cb.on_epoch_end(self, logs)
            print(f"epoch {epoch}: {logs}", file=sys.stdout)
            if self.stop_training:
                break


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(24000, 32)
    y = (x @ torch.randn(32, 6)).argmax(1)
    net = nn.Sequential(
        nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 6)
    )
    folder = tempfile.mkdtemp()
    Model(net).fit(
        x[:20000],
        y[:20000],
        x[20000:],
        y[20000:],
        epochs=4,
        batch_size=128,
        callbacks=[EarlyStopping(), ModelCheckpoint(os.path.join(folder, "best.pt"))],
    )
