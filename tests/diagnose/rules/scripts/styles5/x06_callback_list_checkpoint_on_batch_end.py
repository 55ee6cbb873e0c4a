"""Callbacks everywhere: a `CallbackList` dispatches `on_train_begin`, `on_batch_end`,
`on_epoch_end` to a logger, an LR warm-up and a `ModelCheckpoint`. The checkpoint callback was
written with `save_freq="batch"` semantics from another framework in mind: it saves the model
and optimizer state at the end of every batch.

Planted: torch.save of model + optimizer state after every step. --fixed: the checkpoint callback
saves at epoch end.
"""

import os
import sys
import tempfile

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class Callback:
    def on_train_begin(self, trainer): pass
    def on_batch_end(self, trainer, batch, logs): pass
    def on_epoch_end(self, trainer, epoch, logs): pass


class CallbackList:
    def __init__(self, callbacks):
        self.callbacks = callbacks

    def __getattr__(self, name):
        def dispatch(*args, **kwargs):
            for cb in self.callbacks:
                getattr(cb, name)(*args, **kwargs)
        return dispatch


class Warmup(Callback):
    def __init__(self, steps, base_lr):
        self.steps, self.base_lr, self.seen = steps, base_lr, 0

    def on_batch_end(self, trainer, batch, logs):
        self.seen += 1
        for group in trainer.opt.param_groups:
            group["lr"] = self.base_lr * min(1.0, self.seen / self.steps)


class ModelCheckpoint(Callback):
    def __init__(self, directory, save_freq):
        self.path, self.save_freq = os.path.join(directory, "last.pt"), save_freq

    def _save(self, trainer):
        torch.save({"model": trainer.model.state_dict(), "opt": trainer.opt.state_dict()},
                   self.path)

    def on_batch_end(self, trainer, batch, logs):
        if self.save_freq == "batch":
            self._save(trainer)

    def on_epoch_end(self, trainer, epoch, logs):
        if self.save_freq == "epoch":
            self._save(trainer)


class Trainer:
    def __init__(self, model, callbacks):
        self.model, self.cb = model, CallbackList(callbacks)
        self.opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def fit(self, x, y, epochs=2, batch_size=128):
        self.cb.on_train_begin(self)
        for epoch in range(epochs):
            for b, i in enumerate(range(0, len(x), batch_size)):
                loss = nn.functional.cross_entropy(self.model(x[i:i + batch_size]),
                                                   y[i:i + batch_size])
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
                self.cb.on_batch_end(self, b, {"loss": loss.detach()})
            self.cb.on_epoch_end(self, epoch, {"loss": loss.item()})


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                          nn.Linear(1024, 10))
    x, y = torch.randn(8192, 256), torch.randint(0, 10, (8192,))
    with tempfile.TemporaryDirectory() as out:
        callbacks = [Warmup(100, 1e-3), ModelCheckpoint(out, "epoch" if FIXED else "batch")]
        Trainer(model, callbacks).fit(x, y)


if __name__ == "__main__":
    main()
