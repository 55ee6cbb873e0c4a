"""A Trainer-like class with callbacks; a `ProfilerCallback` starts torch.profiler in
on_train_begin (to "look at the first steps") and is meant to stop in on_train_end, which this
trainer only calls when training finishes normally: with max_steps reached it never runs, and
the profiler records every step of the run.

Planted: the program's torch.profiler records every training step. --fixed: the callback stops
the profiler after 5 steps, in on_step_end.
"""

import sys

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile


class ProfilerCallback:
    def __init__(self, stop_after=None):
        self.prof, self.stop_after = None, stop_after

    def on_train_begin(self, trainer):
        self.prof = profile(activities=[ProfilerActivity.CPU], record_shapes=True)
        self.prof.start()

    def on_step_end(self, trainer, step):
        if self.stop_after is not None and step + 1 == self.stop_after and self.prof:
            self.prof.stop()
            self.prof = None

    def on_train_end(self, trainer):
        if self.prof:
            self.prof.stop()
            print(self.prof.key_averages().table(row_limit=5))


class Trainer:
    def __init__(self, model, callbacks, max_steps):
        self.model, self.callbacks, self.max_steps = model, callbacks, max_steps
        self.opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def fit(self, batches):
        for cb in self.callbacks:
            cb.on_train_begin(self)
        for step, (x, y) in enumerate(batches):
            loss = nn.functional.cross_entropy(self.model(x), y)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            for cb in self.callbacks:
                cb.on_step_end(self, step)
            if step + 1 >= self.max_steps:
                return  # max_steps reached: on_train_end is skipped
        for cb in self.callbacks:
            cb.on_train_end(self)


def batches():
    torch.manual_seed(0)
    while True:
        x = torch.randn(64, 100)
        yield x, (x[:, 0] > 0).long()


if __name__ == "__main__":
    stop_after = 5 if "--fixed" in sys.argv else None
    model = nn.Sequential(nn.Linear(100, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                          nn.Linear(256, 2))
    Trainer(model, [ProfilerCallback(stop_after)], max_steps=800).fit(batches())
