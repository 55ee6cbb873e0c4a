"""Observer pattern: a "divergence guard" subscribes to the trainer's "step_end" event; when a
loss spikes it rolls the model back to the last good copy. A wide two-layer regressor.

Planted: the guard keeps its last good copy with `copy.deepcopy(model)` after every step: the
whole model (~5M parameters) is copied each step.
--fixed: it copies the parameters into preallocated buffers with `torch._foreach_copy_` (no new
module, no allocation).
"""

import copy
import sys
from collections import defaultdict

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class Bus:
    def __init__(self):
        self.subs = defaultdict(list)

    def subscribe(self, event, fn):
        self.subs[event].append(fn)

    def publish(self, event, **kw):
        for fn in self.subs[event]:
            fn(**kw)


class DivergenceGuard:
    def __init__(self, model):
        self.model = model
        self.best = float("inf")
        self.saved = (
            [p.detach().clone() for p in model.parameters()] if FIXED else copy.deepcopy(model)
        )

    def on_step_end(self, loss):
        value = float(loss)
        if value > 10 * self.best:
            self.restore()
            return
        self.best = min(self.best, value)
        if FIXED:
            torch._foreach_copy_(self.saved, [p.detach() for p in self.model.parameters()])
        else:
            self.saved = copy.deepcopy(self.model)

    def restore(self):
        source = self.saved if FIXED else [p.detach() for p in self.saved.parameters()]
        with torch.no_grad():
            torch._foreach_copy_(list(self.model.parameters()), source)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(4096, 256)
    y = x[:, :4].sum(1, keepdim=True)
    model = nn.Sequential(
        nn.Linear(256, 2048), nn.ReLU(), nn.Linear(2048, 2048), nn.ReLU(), nn.Linear(2048, 1)
    )
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    bus = Bus()
    bus.subscribe("step_end", DivergenceGuard(model).on_step_end)
    for epoch in range(2):
        for idx in torch.randperm(len(x)).split(128):
            loss = nn.functional.mse_loss(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            bus.publish("step_end", loss=loss)
        print("epoch", epoch, float(loss))
