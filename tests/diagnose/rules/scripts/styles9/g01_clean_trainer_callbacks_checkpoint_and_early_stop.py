"""Clean: an author-written `Trainer` with callbacks: a `Checkpointer` that saves on epoch end,
an `EarlyStopping` callback that validates under `no_grad` in `eval()` mode and sets
`trainer.should_stop`, and a progress callback that prints the epoch's mean loss (accumulated as
a detached tensor, read once per epoch). An MLP with Dropout.

No planted problem; `--fixed` changes nothing (kept for the bench's control run).
"""

import os
import tempfile

import torch
from torch import nn


class Callback:
    def on_batch_end(self, trainer, loss):
        pass

    def on_epoch_end(self, trainer, epoch):
        pass


class Checkpointer(Callback):
    def __init__(self, folder):
        self.path = os.path.join(folder, "epoch.pt")

    def on_epoch_end(self, trainer, epoch):
        torch.save({"model": trainer.model.state_dict(), "epoch": epoch}, self.path)


class EarlyStopping(Callback):
    def __init__(self, xv, yv, patience=2):
        self.xv, self.yv, self.patience, self.best, self.bad = xv, yv, patience, float("inf"), 0

    def on_epoch_end(self, trainer, epoch):
        trainer.model.eval()
        with torch.no_grad():
            val = nn.functional.cross_entropy(trainer.model(self.xv), self.yv).item()
        trainer.model.train()
        if val < self.best:
            self.best, self.bad = val, 0
        else:
            self.bad += 1
            trainer.should_stop = self.bad >= self.patience


class Progress(Callback):
    def __init__(self):
        self.total, self.count = torch.zeros(()), 0

    def on_batch_end(self, trainer, loss):
        self.total += loss.detach()
        self.count += 1

    def on_epoch_end(self, trainer, epoch):
        print("epoch", epoch, "loss", (self.total / self.count).item())
        self.total, self.count = torch.zeros(()), 0


class Trainer:
    def __init__(self, model, optim, callbacks):
        self.model, self.optim, self.callbacks, self.should_stop = model, optim, callbacks, False

    def fit(self, x, y, epochs, batch_size):
        for epoch in range(epochs):
            self.model.train()
            perm = torch.randperm(len(x))
            for start in range(0, len(x), batch_size):
                idx = perm[start : start + batch_size]
                loss = nn.functional.cross_entropy(self.model(x[idx]), y[idx])
                self.optim.zero_grad()
                loss.backward()
                self.optim.step()
                for cb in self.callbacks:
                    cb.on_batch_end(self, loss)
            for cb in self.callbacks:
                cb.on_epoch_end(self, epoch)
            if self.should_stop:
                break


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(7000, 40)
    y = (x[:, :4].sum(1) > 0).long()
    model = nn.Sequential(nn.Linear(40, 256), nn.ReLU(), nn.Dropout(0.2), nn.Linear(256, 2))
    optim = torch.optim.Adam(model.parameters(), lr=1e-3)
    with tempfile.TemporaryDirectory() as folder:
        callbacks = [Checkpointer(folder), EarlyStopping(x[6000:], y[6000:]), Progress()]
        Trainer(model, optim, callbacks).fit(x[:6000], y[:6000], epochs=4, batch_size=128)
