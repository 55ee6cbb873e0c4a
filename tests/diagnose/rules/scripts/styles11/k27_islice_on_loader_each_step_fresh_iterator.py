"""A training loop driven by a global step counter, taking "the next batch" with
`itertools.islice(loader, 1)` (a helper written for notebooks that want exactly one batch). The
loader shuffles a map-style dataset of generated images through one worker.

Planted: `next(itertools.islice(loader, 1))` starts a new iterator over the loader every step:
the worker process is started, the sampler reshuffled and the first batches prefetched, for
one batch. --fixed: one iterator kept for the epoch (`for` loop over the loader).
"""

import itertools
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv


class Images(Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 3, 28, 28, generator=g)
        self.y = (self.x[:, 0].mean((1, 2)) > 0).long()

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i].flip(-1) if i % 2 else self.x[i], self.y[i]


def one_batch(loader):
    return next(itertools.islice(loader, 1))


def batches(loader):
    while True:
        yield from loader


if __name__ == "__main__":
    torch.manual_seed(0)
    loader = DataLoader(Images(4000), batch_size=64, shuffle=True, num_workers=1,
                        persistent_workers=FIXED)
    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                          nn.Flatten(), nn.Linear(32, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    stream = batches(loader) if FIXED else None
    for global_step in range(200):
        xb, yb = next(stream) if FIXED else one_batch(loader)
        loss = nn.functional.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if global_step % 50 == 0:
            print(global_step, float(loss))
