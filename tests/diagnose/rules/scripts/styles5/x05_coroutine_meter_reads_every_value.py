"""Metrics are gathered by a coroutine: `meter = running_meter(); next(meter)` and the loop
`send()`s each step's loss and accuracy to it. The coroutine turns every value into a Python
float on arrival (`float(value)`), so each step waits for its tensors to be read on the host.

Planted: two host reads per step inside the coroutine. --fixed: the loop sends detached tensors
and the coroutine sums them as tensors, reading once per epoch.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def running_meter():
    totals, count = {}, 0
    while True:
        update = yield totals
        if update is None:
            totals, count = {}, 0
            continue
        count += 1
        for key, value in update.items():
            value = value if FIXED else float(value)
            totals[key] = totals.get(key, 0.0) + value


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv1d(4, 32, 5, padding=2), nn.ReLU(), nn.Conv1d(32, 32, 5, padding=2),
                          nn.ReLU(), nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(32, 5))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(4096, 4, 64), torch.randint(0, 5, (4096,))
    meter = running_meter()
    next(meter)
    for epoch in range(2):
        meter.send(None)
        for idx in torch.randperm(len(x)).split(64):
            logits = model(x[idx])
            loss = nn.functional.cross_entropy(logits, y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            totals = meter.send({"loss": loss.detach(),
                                 "acc": (logits.argmax(1) == y[idx]).float().mean()})
        print(epoch, {k: float(v) for k, v in totals.items()})


if __name__ == "__main__":
    main()
