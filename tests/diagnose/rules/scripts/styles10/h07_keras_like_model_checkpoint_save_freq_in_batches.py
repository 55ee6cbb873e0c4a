"""A Keras-like API written in torch: `model.compile(optimizer, loss)`, `model.fit(x, y,
epochs, batch_size, callbacks=[...])`, and callbacks in Keras's shape (`on_train_batch_end`,
`on_epoch_end`), among them a `ModelCheckpoint(filepath, save_freq=...)`. A tabular regressor on
generated data.

Planted: `ModelCheckpoint(save_freq=1)`: as in Keras, an integer `save_freq` counts BATCHES,
so the checkpoint (model and optimizer state, 2.4M parameters) is written after every batch.
--fixed: `save_freq="epoch"`.
"""

import os
import sys
import tempfile

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class Callback:
    def on_train_batch_end(self, model, batch, logs):
        pass

    def on_epoch_end(self, model, epoch, logs):
        pass


class ModelCheckpoint(Callback):
    def __init__(self, filepath, save_freq="epoch"):
        self.filepath, self.save_freq = filepath, save_freq

    def _save(self, model):
        torch.save({"model": model.state_dict(), "optimizer": model.optimizer.state_dict()},
                   self.filepath)

    def on_train_batch_end(self, model, batch, logs):
        if isinstance(self.save_freq, int) and (batch + 1) % self.save_freq == 0:
            self._save(model)

    def on_epoch_end(self, model, epoch, logs):
        if self.save_freq == "epoch":
            self._save(model)


class Sequential(nn.Sequential):
    def compile(self, optimizer, loss):
        self.optimizer = optimizer(self.parameters())
        self.loss_fn = loss

    def fit(self, x, y, epochs=1, batch_size=32, callbacks=()):
        for epoch in range(epochs):
            perm = torch.randperm(len(x))
            for batch, start in enumerate(range(0, len(x), batch_size)):
                idx = perm[start : start + batch_size]
                loss = self.loss_fn(self(x[idx]), y[idx])
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                for cb in callbacks:
                    cb.on_train_batch_end(self, batch, {"loss": loss})
            for cb in callbacks:
                cb.on_epoch_end(self, epoch, {"loss": loss.item()})
            print("epoch", epoch, loss.item())


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(8192, 128)
    y = x[:, :4].sum(1, keepdim=True)
    model = Sequential(nn.Linear(128, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                       nn.Linear(1024, 1))
    model.compile(lambda p: torch.optim.Adam(p, lr=1e-3), nn.functional.mse_loss)
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = ModelCheckpoint(os.path.join(tmp, "best.pt"),
                               save_freq="epoch" if FIXED else 1)
        model.fit(x, y, epochs=3, batch_size=128, callbacks=[ckpt])
