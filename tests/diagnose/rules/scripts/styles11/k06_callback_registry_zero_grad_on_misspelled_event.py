"""A tiny training framework: a `Trainer` fires named events (`on_fit_start`,
`on_train_batch_start`, `on_after_backward`, `on_train_batch_end`, ...) and user callbacks are
registered with a decorator under an event name. Gradient clearing, clipping and the optimizer
step are all callbacks. A 1D-CNN over generated sensor windows.

Planted: the gradient-clearing callback is registered for "on_batch_start", an event the
Trainer never fires (it fires "on_train_batch_start"): gradients are never cleared and every
step adds to all earlier ones. --fixed: registered for "on_train_batch_start".
"""

import sys
from collections import defaultdict

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer
        self.callbacks = defaultdict(list)

    def on(self, event):
        def register(fn):
            self.callbacks[event].append(fn)
            return fn
        return register

    def fire(self, event, **kw):
        for fn in self.callbacks[event]:
            fn(self, **kw)

    def fit(self, x, y, steps, batch=64):
        self.fire("on_fit_start")
        for step in range(steps):
            idx = torch.randint(0, len(x), (batch,))
            self.fire("on_train_batch_start", step=step)
            loss = nn.functional.cross_entropy(self.model(x[idx]), y[idx])
            loss.backward()
            self.fire("on_after_backward", step=step)
            self.fire("on_train_batch_end", step=step, loss=loss)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(6000, 6, 128)
    y = (x[:, 0, :16].mean(-1) > 0).long()
    model = nn.Sequential(nn.Conv1d(6, 32, 5, padding=2), nn.ReLU(), nn.MaxPool1d(2),
                          nn.Conv1d(32, 64, 5, padding=2), nn.ReLU(), nn.AdaptiveAvgPool1d(1),
                          nn.Flatten(), nn.Linear(64, 2))
    trainer = Trainer(model, torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9))

    @trainer.on("on_train_batch_start" if FIXED else "on_batch_start")
    def clear_grads(tr, step):
        tr.optimizer.zero_grad()

    @trainer.on("on_after_backward")
    def clip(tr, step):
        nn.utils.clip_grad_norm_(tr.model.parameters(), 5.0)

    @trainer.on("on_train_batch_end")
    def optimizer_step(tr, step, loss):
        tr.optimizer.step()
        if step % 100 == 0:
            print(step, float(loss))

    trainer.fit(x, y, steps=500)
