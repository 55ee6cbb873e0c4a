"""Gradient accumulation to reach an effective batch of 64 on a "memory-limited" setup: the
loader yields micro-batches and the loop steps the optimizer every `accum` micro-batches,
scaling the loss by 1/accum. One persistent worker builds the samples (a light augmentation).

Planted: the micro-batch is 2 (accum 32), and each micro-batch travels through the worker
queue on its own: the per-batch cost of the loader (collate, pickling, the queue) is paid for
every 2 samples, and each forward and backward runs on 2 rows. --fixed: the loader yields the
whole 64-sample batch and it is split into the same micro-batches in the training process.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv
EFFECTIVE, MICRO = 64, 2


class Noisy(Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 64, generator=g)
        self.y = (self.x[:, :4].sum(1) > 0).long()

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i] * (1 + 0.1 * torch.randn(1)), self.y[i]


if __name__ == "__main__":
    torch.manual_seed(0)
    accum = EFFECTIVE // MICRO
    loader = DataLoader(
        Noisy(6000),
        batch_size=EFFECTIVE if FIXED else MICRO,
        shuffle=True,
        num_workers=1,
        persistent_workers=True,
    )
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(2):
        micro = 0
        for xb, yb in loader:
            parts = zip(xb.split(MICRO), yb.split(MICRO)) if FIXED else [(xb, yb)]
            for xm, ym in parts:
                loss = nn.functional.cross_entropy(model(xm), ym) / accum
                loss.backward()
                micro += 1
                if micro % accum == 0:
                    opt.step()
                    opt.zero_grad()
        print("epoch", epoch, float(loss) * accum)
