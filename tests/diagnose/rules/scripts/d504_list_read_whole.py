"""A loss-spike guard that keeps every step's loss, as a float, in a list attribute of a helper
object and takes the median of the whole list every step (`np.median(self.losses)`): the list
converted and sorted whole, every step, costs more every step. `--window`: a deque of the last 100
losses (a window of fixed size), and a plain log list that only the end of the run reads."""

import sys
from collections import deque

import numpy as np
import torch
from torch import nn

WINDOW = "--window" in sys.argv


class SpikeGuard:
    def __init__(self):
        self.losses = deque(maxlen=100) if WINDOW else []

    def scale(self, loss_value):
        self.losses.append(loss_value)
        return min(1.0, 3.0 * float(np.median(self.losses)) / max(loss_value, 1e-8))


if __name__ == "__main__":
    torch.manual_seed(0)
    x, y = torch.randn(3200, 32), torch.randint(0, 4, (3200,))
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    guard = SpikeGuard()
    logged = []
    for step in range(400):
        xb, yb = x[step % 50 * 64 : step % 50 * 64 + 64], y[step % 50 * 64 : step % 50 * 64 + 64]
        loss = nn.functional.cross_entropy(model(xb), yb)
        optimizer.zero_grad()
        loss.backward()
        for p in model.parameters():
            p.grad.mul_(guard.scale(loss.item()))
        optimizer.step()
        logged.append(loss.item())
    print("mean loss", float(np.mean(logged)))
