"""Observer pattern: a trainer publishes "step_end" and "epoch_end" events; a validation
subscriber scores the model on a validation set when its event arrives. A CNN classifier.

Planted: the validation subscriber is registered for "step_end" (the event names sit side by
side in a list and the wrong one was picked): the whole validation set (half as large as the
training set) is evaluated after every training step.
--fixed: registered for "epoch_end".
"""

import sys
from collections import defaultdict

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
EVENTS = ["step_end", "epoch_end"]


class Bus:
    def __init__(self):
        self.handlers = defaultdict(list)

    def on(self, event, handler):
        self.handlers[event].append(handler)

    def emit(self, event, **kw):
        for handler in self.handlers[event]:
            handler(**kw)


class Validator:
    def __init__(self, model, x, y):
        self.model, self.x, self.y = model, x, y
        self.scores = []

    def __call__(self, **_):
        self.model.eval()
        with torch.inference_mode():
            acc = (self.model(self.x).argmax(1) == self.y).float().mean()
        self.model.train()
        self.scores.append(float(acc))


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(3072, 1, 16, 16)
    y = (x[:, 0, :8].mean((1, 2)) > 0).long()
    train_x, train_y, val_x, val_y = x[:2048], y[:2048], x[2048:], y[2048:]
    model = nn.Sequential(nn.Conv2d(1, 16, 3), nn.ReLU(), nn.Flatten(), nn.Linear(16 * 14 * 14, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    bus = Bus()
    bus.on(EVENTS[1] if FIXED else EVENTS[0], Validator(model, val_x, val_y))
    for epoch in range(3):
        for idx in torch.randperm(len(train_x)).split(64):
            loss = nn.functional.cross_entropy(model(train_x[idx]), train_y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            bus.emit("step_end", loss=loss)
        bus.emit("epoch_end", epoch=epoch)
        print("epoch", epoch, float(loss))
