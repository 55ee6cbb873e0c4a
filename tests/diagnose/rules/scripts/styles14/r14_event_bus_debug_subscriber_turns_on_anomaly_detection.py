"""Training events are published on a small event bus (observer pattern): subscribers register
for "fit_start", "step_end" and "epoch_end". A seq2seq-free sequence regressor (a GRU) trains.

Planted: a `DebugSubscriber`, subscribed by default "while the model is new", calls
`torch.autograd.set_detect_anomaly(True)` on "fit_start" and nothing ever turns it off: every
backward runs with anomaly detection (a traceback per op, NaN checks).
--fixed: the debug subscriber is not registered.
"""

import sys
from collections import defaultdict

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class EventBus:
    def __init__(self):
        self.subscribers = defaultdict(list)

    def subscribe(self, event, fn):
        self.subscribers[event].append(fn)

    def publish(self, event, **payload):
        for fn in self.subscribers[event]:
            fn(**payload)


class DebugSubscriber:
    def attach(self, bus):
        bus.subscribe("fit_start", self.on_fit_start)

    def on_fit_start(self, **_):
        torch.autograd.set_detect_anomaly(True)


class Printer:
    def attach(self, bus):
        bus.subscribe("epoch_end", lambda epoch, loss: print("epoch", epoch, float(loss)))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(8, 64, batch_first=True)
        self.out = nn.Linear(64, 1)

    def forward(self, x):
        return self.out(self.rnn(x)[0][:, -1])


if __name__ == "__main__":
    torch.manual_seed(0)
    bus = EventBus()
    Printer().attach(bus)
    if not FIXED:
        DebugSubscriber().attach(bus)
    x = torch.randn(2048, 24, 8)
    y = x[:, :, 0].sum(1, keepdim=True)
    model = Model()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    bus.publish("fit_start")
    for epoch in range(3):
        for idx in torch.randperm(len(x)).split(64):
            loss = nn.functional.mse_loss(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            bus.publish("step_end", loss=loss)
        bus.publish("epoch_end", epoch=epoch, loss=loss)
