"""A streaming `IterableDataset` that shards its sample stream across DataLoader workers with
`get_worker_info()` (each worker takes every n-th sample) and synthesises each sample on the fly:
a noisy 2D field smoothed by repeated box filtering. A small conv regressor.

Planted: the DataLoader is built with `num_workers=0`, so the sharding code never runs and every
sample is synthesised in the training process between steps. --fixed: one persistent worker.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

FIXED = "--fixed" in sys.argv


class FieldStream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        start, stride = (info.id, info.num_workers) if info else (0, 1)
        for i in range(start, self.n, stride):
            g = torch.Generator().manual_seed(i)
            field = torch.randn(1, 1, 48, 48, generator=g)
            for _ in range(12):
                field = nn.functional.avg_pool2d(field, 3, stride=1, padding=1)
            yield field[0], field.std().reshape(1)


if __name__ == "__main__":
    torch.manual_seed(0)
    workers = 1 if FIXED else 0
    loader = DataLoader(
        FieldStream(3000), batch_size=32, num_workers=workers, persistent_workers=workers > 0
    )
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 16, 3, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(16, 1),
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(3):
        for field, target in loader:
            loss = nn.functional.mse_loss(model(field), target)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
