"""A training run instrumented for a "loss-landscape" study: a tracker records a flattened copy
of the weights after each step and reports how far the current weights are from where they have
been (mean distance to the trajectory). A small CNN-free MLP on generated data.

Planted: the tracker keeps every snapshot (`torch.cat` onto a growing matrix each step) and
computes `torch.cdist` against all of them every step: the step's cost grows with the step
number. --fixed: snapshots every 50 steps into a fixed-size ring, distance to those only.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class TrajectoryTracker:
    def __init__(self, model, ring=16):
        self.model = model
        self.history = None
        self.ring, self.count = ring, 0

    @torch.no_grad()
    def update(self):
        flat = torch.cat([p.flatten() for p in self.model.parameters()])[None]
        self.count += 1
        if FIXED:
            if self.count % 50 == 1:
                self.history = flat if self.history is None else torch.cat(
                    [self.history, flat])[-self.ring:]
        else:
            self.history = flat if self.history is None else torch.cat([self.history, flat])
        return torch.cdist(flat, self.history).mean()


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(8000, 40)
    y = (x[:, :4].sum(1) > 0).long()
    model = nn.Sequential(nn.Linear(40, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                          nn.Linear(128, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    tracker = TrajectoryTracker(model)
    for step in range(1200):
        idx = torch.randint(0, len(x), (128,))
        loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        dist = tracker.update()
        if step % 200 == 0:
            print(step, float(loss), float(dist))
