"""A small `Trainer` class written by the author, with a list of callbacks and named hook points
(`on_train_start`, `on_batch_end`, `on_epoch_end`); a `Checkpointer` callback keeps the latest
weights and optimizer state on disk so a crash loses little. An MLP regressor on generated data.

Planted: the `Checkpointer` is registered with `every="batch"`, so its `on_batch_end` writes the
model and optimizer with `torch.save` after every training step. --fixed: `every="epoch"`.
"""

import os
import sys
import tempfile

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class Callback:
    def on_train_start(self, trainer):
        pass

    def on_batch_end(self, trainer, loss):
        pass

    def on_epoch_end(self, trainer, epoch):
        pass


class Checkpointer(Callback):
    def __init__(self, folder, every):
        self.path, self.every = os.path.join(folder, "last.pt"), every

    def _save(self, trainer):
        state = {"model": trainer.model.state_dict(), "optim": trainer.optim.state_dict()}
        torch.save(state, self.path)

    def on_batch_end(self, trainer, loss):
        if self.every == "batch":
            self._save(trainer)

    def on_epoch_end(self, trainer, epoch):
        if self.every == "epoch":
            self._save(trainer)


class Trainer:
    def __init__(self, model, optim, callbacks=()):
        self.model, self.optim, self.callbacks = model, optim, list(callbacks)

    def _call(self, hook, *args):
        for cb in self.callbacks:
            getattr(cb, hook)(self, *args)

    def fit(self, x, y, epochs, batch_size):
        self._call("on_train_start")
        for epoch in range(epochs):
            perm = torch.randperm(len(x))
            for start in range(0, len(x), batch_size):
                idx = perm[start : start + batch_size]
                loss = nn.functional.mse_loss(self.model(x[idx]), y[idx])
                self.optim.zero_grad()
                loss.backward()
                self.optim.step()
                self._call("on_batch_end", loss)
            self._call("on_epoch_end", epoch)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(6000, 64)
    y = x[:, :8].sum(1, keepdim=True) + 0.1 * torch.randn(6000, 1)
    model = nn.Sequential(nn.Linear(64, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 1))
    optim = torch.optim.Adam(model.parameters(), lr=1e-3)
    with tempfile.TemporaryDirectory() as folder:
        ckpt = Checkpointer(folder, every="epoch" if FIXED else "batch")
        Trainer(model, optim, [ckpt]).fit(x, y, epochs=3, batch_size=128)
    print("done")
