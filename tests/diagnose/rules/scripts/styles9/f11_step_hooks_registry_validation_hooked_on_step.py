"""A training loop with an event registry: functions are attached to named events
(`events.on("step_end", fn)`), the loop fires `step_end` after every optimizer step and
`epoch_end` after every epoch. Validation, a best-model tracker and an LR-plateau scheduler are
attached as handlers. A GRU regressor on generated sequences.

Planted: validation (the whole validation set, under `no_grad` and `eval()`) is attached to
`step_end` instead of `epoch_end`, so it runs after every training step.
--fixed: attached to `epoch_end`.
"""

import collections
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class Events:
    def __init__(self):
        self.handlers = collections.defaultdict(list)

    def on(self, name, fn):
        self.handlers[name].append(fn)

    def fire(self, name, **state):
        for fn in self.handlers[name]:
            fn(**state)


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(4, 32, batch_first=True)
        self.head = nn.Linear(32, 1)

    def forward(self, x):
        return self.head(self.gru(x)[0][:, -1])


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(4000, 20, 4)
    y = x[:, :, 0].cumsum(1)[:, -1:] * 0.1
    xv, yv = x[3000:], y[3000:]
    model = Regressor()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=2)
    best = {"loss": float("inf")}

    def validate(**_):
        model.eval()
        with torch.no_grad():
            val = nn.functional.mse_loss(model(xv), yv).item()
        model.train()
        plateau.step(val)
        best["loss"] = min(best["loss"], val)

    events = Events()
    events.on("epoch_end" if FIXED else "step_end", validate)
    events.on("epoch_end", lambda epoch, **_: print("epoch", epoch, "best", best["loss"]))
    for epoch in range(3):
        perm = torch.randperm(3000)
        for step, start in enumerate(range(0, 3000, 32)):
            idx = perm[start : start + 32]
            loss = nn.functional.mse_loss(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            events.fire("step_end", step=step, loss=loss)
        events.fire("epoch_end", epoch=epoch)
