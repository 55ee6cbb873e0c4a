"""A step-counted run: training is driven by `global_step` over an endless stream of batches (a
generator that restarts the DataLoader when it ends, reshuffled), the LR follows a warmup-then-cosine schedule
written as a lambda, and the log line prints every 100 steps. A small CNN on generated 16x16
images (fresh noise and standardisation per sample in the Dataset) with two DataLoader workers.

Planted: `batch_size=4` with two workers: each step waits for four images to be collated and
pickled across from a worker, so the hand-over sets the pace. --fixed: batch_size=128.
"""

import math
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv
BATCH = 128 if FIXED else 4
TOTAL_STEPS = 400 if FIXED else 3000


class NoisyImages(Dataset):
    """Each image gets fresh noise and is standardised when fetched (per-sample work)."""

    def __init__(self, n=4000):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 1, 16, 16, generator=g)
        self.y = (self.x[:, 0, :8].mean((1, 2)) > 0).long()

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        img = self.x[i] + 0.1 * torch.randn(1, 16, 16)
        return (img - img.mean()) / (img.std() + 1e-6), self.y[i]


def forever(loader):
    while True:
        yield from loader


if __name__ == "__main__":
    torch.manual_seed(0)
    loader = DataLoader(NoisyImages(), batch_size=BATCH, shuffle=True, num_workers=2,
                        persistent_workers=True)
    model = nn.Sequential(nn.Conv2d(1, 8, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 14 * 14, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    warmup = 50
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warmup) * 0.5 * (1 + math.cos(math.pi * s / TOTAL_STEPS))
    )
    batches = forever(loader)
    for global_step in range(TOTAL_STEPS):
        xb, yb = next(batches)
        loss = nn.functional.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if global_step % 100 == 0:
            print(global_step, loss.item())
