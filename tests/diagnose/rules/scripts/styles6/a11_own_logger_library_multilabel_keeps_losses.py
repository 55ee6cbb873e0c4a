"""A script that ships its own tiny metrics/logging library at the top (`Run`, `Scalar`,
`run.log(...)`, `run.summary()`), in the spirit of a stripped-down experiment tracker. A
multi-label image tagger (20 tags, BCE with logits, a small convnet) on synthetic images whose
tags are bright patches.

Planted: `run.log(loss=loss, ...)` is handed the loss tensor itself and the library appends the
values it gets to its history: every step's graph is kept alive. --fixed: `loss.item()` is
logged only every 50 steps.
"""

import sys
import time

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
TAGS = 20


# ---- minitrack: a 60-line experiment tracker ------------------------------------------------
class Scalar:
    def __init__(self, name):
        self.name, self.values = name, []

    def add(self, value):
        self.values.append(value)

    def last(self):
        return self.values[-1] if self.values else None


class Run:
    def __init__(self, project):
        self.project, self.scalars, self.t0 = project, {}, time.time()

    def log(self, **values):
        for name, value in values.items():
            self.scalars.setdefault(name, Scalar(name)).add(value)

    def summary(self):
        parts = [f"{n}={float(s.last()):.4f}" for n, s in self.scalars.items()]
        return f"[{self.project} {time.time() - self.t0:.0f}s] " + " ".join(parts)


# ---- model and data -------------------------------------------------------------------------
def make_data(n, gen):
    tags = (torch.rand(n, TAGS, generator=gen) < 0.15).float()
    x = torch.randn(n, 3, 32, 32, generator=gen) * 0.3
    for k in range(TAGS):
        r, c = divmod(k, 5)
        x[:, k % 3, r * 8:r * 8 + 6, c * 6:c * 6 + 5] += 2 * tags[:, k, None, None]
    return x, tags


def tagger():
    return nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(64 * 8 * 8, 128), nn.ReLU(),
                         nn.Linear(128, TAGS))


def main():
    torch.manual_seed(0)
    x, y = make_data(4096, torch.Generator().manual_seed(0))
    model = tagger()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    run = Run("tagger")
    step = 0
    for epoch in range(3):
        for idx in torch.randperm(len(x)).split(64):
            logits = model(x[idx])
            loss = nn.functional.binary_cross_entropy_with_logits(logits, y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            if not FIXED:
                run.log(loss=loss, positives=y[idx].sum())
            elif step % 50 == 0:
                run.log(loss=loss.item(), positives=y[idx].sum().item())
            step += 1
        print(run.summary())


if __name__ == "__main__":
    main()
