"""A step-based (not epoch-based) training loop driven by `itertools`: `for step, batch in
zip(itertools.count(), stream())` stops after a step budget, and `stream()` is a generator
function that yields batches from a DataLoader with two workers... or so it intends.

Planted: `stream()` yields `next(iter(loader))` in a `while True`, so every step creates a new
iterator, starts the loader's workers again and throws away everything but its first batch.
--fixed: `stream()` cycles through the loader, one iterator per epoch (persistent workers).
"""

import itertools
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv


class Jittered(Dataset):
    """Samples with a little Gaussian jitter added at fetch time (augmentation)."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i] + 0.05 * torch.randn(self.x.shape[1]), self.y[i]


def stream(loader):
    if FIXED:
        while True:
            yield from loader
    else:
        while True:
            yield next(iter(loader))


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(20000, 32)
    y = (x[:, 0] * x[:, 1] > 0).long()
    loader = DataLoader(
        Jittered(x, y), batch_size=256, shuffle=True, num_workers=1, persistent_workers=FIXED
    )
    model = nn.Sequential(
        nn.Linear(32, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 2)
    )
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for step, (xb, yb) in zip(itertools.count(), stream(loader)):
        if step == 120:
            break
        loss = nn.functional.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 40 == 0:
            print("step", step, float(loss))
