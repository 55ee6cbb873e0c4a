"""A step-counted run: training is driven by `global_step` over an endless stream of batches (a
generator that restarts the DataLoader when it ends, reshuffled), the LR follows a warmup-then-cosine schedule
written as a lambda, and the log line prints every 100 steps. A small CNN on generated 16x16
images with two DataLoader workers.

Planted: `batch_size=4` with two workers: each step waits for four images to be collated and
pickled across from a worker, so the hand-over sets the pace. --fixed: batch_size=128.
"""

import math
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

FIXED = "--fixed" in sys.argv
BATCH = 128 if FIXED else 4
TOTAL_STEPS = 400 if FIXED else 3000


def forever(loader):
    while True:
        yield from loader


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(4000, 1, 16, 16)
    y = (x[:, 0, :8].mean((1, 2)) > 0).long()
    loader = DataLoader(TensorDataset(x, y), batch_size=BATCH, shuffle=True, num_workers=2,
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
