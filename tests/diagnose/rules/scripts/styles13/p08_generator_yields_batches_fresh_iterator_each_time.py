"""The whole training is written as generators: `batches()` yields batches forever, `train()`
consumes them and yields the loss after each step, and the main loop just iterates `train()`.
A tabular classifier on jittered rows; the loader has one worker.

Planted: `batches()` yields `next(iter(loader))` in a `while True` loop: each batch starts a
new loader iterator, which starts a worker process and fetches its first batches, every step.
--fixed: `batches()` loops `for batch in loader` inside the `while True`.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv


class Jittered(Dataset):
    """Rows with fresh noise each time they are read (a light per-sample augmentation)."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i] + 0.05 * torch.randn(self.x.shape[1]), self.y[i]


def batches(loader):
    while True:
        if FIXED:
            yield from loader
        else:
            yield next(iter(loader))


def train(model, opt, stream):
    for x, y in stream:
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        yield float(loss)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(8192, 32)
    y = (x[:, 0] > 0).long()
    loader = DataLoader(
        Jittered(x, y), batch_size=256, shuffle=True, num_workers=1, persistent_workers=FIXED
    )
    model = nn.Sequential(
        nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 2)
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step, loss in enumerate(train(model, opt, batches(loader))):
        if step % 20 == 0:
            print(step, loss)
        if step == 150:
            break
