"""`with Trainer(model) as t: t.fit(...)`: `__enter__` runs a "sanity check" (two validation
batches through the model, as Lightning does before fitting) so a broken model fails fast. The
model has BatchNorm and Dropout.

Planted: the sanity check calls `model.eval()` and never switches back: the whole training runs
in eval mode (Dropout off, BatchNorm statistics frozen at their initial values).
--fixed: the sanity check restores `model.train()`.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class Trainer:
    def __init__(self, model, val):
        self.model, self.val = model, val
        self.opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def __enter__(self):
        self.model.eval()
        with torch.no_grad():
            for xb in self.val[:128].split(64):
                assert torch.isfinite(self.model(xb)).all()
        if FIXED:
            self.model.train()
        return self

    def fit(self, x, y, epochs):
        for epoch in range(epochs):
            for idx in torch.randperm(len(x)).split(64):
                loss = nn.functional.cross_entropy(self.model(x[idx]), y[idx])
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
            print("epoch", epoch, float(loss))

    def __exit__(self, *exc):
        return False


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(4096, 64)
    y = (x[:, :3].sum(1) > 0).long()
    model = nn.Sequential(
        nn.Linear(64, 256), nn.BatchNorm1d(256), nn.ReLU(), nn.Dropout(0.3), nn.Linear(256, 2)
    )
    with Trainer(model, x[3584:]) as t:
        t.fit(x[:3584], y[:3584], epochs=3)
