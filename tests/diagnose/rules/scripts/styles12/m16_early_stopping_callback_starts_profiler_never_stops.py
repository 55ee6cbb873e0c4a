"""A fit loop with callbacks (`on_train_begin`, `on_step_end`, `on_epoch_end`) and early
stopping on a validation loss with patience. A `ProfileFirstSteps` callback is meant to profile
the first few steps for a trace.

Planted: the callback calls `prof.start()` in `on_train_begin` and `prof.step()` every step,
but its schedule-less profiler is only stopped in `on_train_end`, so the whole run records
every op. --fixed: the callback stops the profiler after its first 5 steps.
"""

import sys

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile

FIXED = "--fixed" in sys.argv


class ProfileFirstSteps:
    def __init__(self, steps=5):
        self.steps, self.seen, self.prof = steps, 0, None

    def on_train_begin(self):
        self.prof = profile(activities=[ProfilerActivity.CPU], record_shapes=True)
        self.prof.start()

    def on_step_end(self):
        if self.prof is None:
            return
        self.prof.step()
        self.seen += 1
        if FIXED and self.seen == self.steps:
            self.prof.stop()
            self.prof = None

    def on_train_end(self):
        if self.prof is not None:
            self.prof.stop()


class EarlyStopping:
    def __init__(self, patience=3):
        self.best, self.bad, self.patience = float("inf"), 0, patience

    def should_stop(self, val):
        self.best, self.bad = (val, 0) if val < self.best else (self.best, self.bad + 1)
        return self.bad >= self.patience


def fit(model, data, val, callbacks, epochs=6):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    stopper = EarlyStopping()
    for cb in callbacks:
        cb.on_train_begin()
    for epoch in range(epochs):
        for x, y in data:
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            for cb in callbacks:
                cb.on_step_end()
        with torch.no_grad():
            v = float(nn.functional.cross_entropy(model(val[0]), val[1]))
        print("epoch", epoch, v)
        if stopper.should_stop(v):
            break
    for cb in callbacks:
        cb.on_train_end()


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(12000, 40)
    y = (x[:, :4].sum(1) > 0).long()
    model = nn.Sequential(
        *[m for _ in range(6) for m in (nn.Linear(40, 40), nn.Tanh())], nn.Linear(40, 2)
    )
    data = [(x[i], y[i]) for i in torch.randperm(10000).split(64)]
    fit(model, data, (x[10000:], y[10000:]), [ProfileFirstSteps()])
