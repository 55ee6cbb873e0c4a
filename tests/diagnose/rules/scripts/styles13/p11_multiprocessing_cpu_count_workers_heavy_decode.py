"""Images decoded from compressed bytes (zlib, as a record file would hold them) by a dataset
with a heavy per-sample decode; the worker count comes from `multiprocessing.cpu_count()` "to
use the machine".

Planted: `num_workers=multiprocessing.cpu_count()`: on this machine a worker on every core, so
the workers and the training step fight for the same cores and the steps wait for data.
--fixed: one core left to the training process (`cpu_count() - 1` workers, at least 1).
"""

import multiprocessing
import sys
import zlib

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv


class Compressed(Dataset):
    def __init__(self, n=3000):
        rng = np.random.default_rng(0)
        self.records = [
            zlib.compress((rng.random((3, 64, 64)) * 255).astype(np.uint8).tobytes(), 6)
            for _ in range(n)
        ]
        self.labels = rng.integers(0, 10, n)

    def __len__(self):
        return len(self.records)

    def __getitem__(self, i):
        raw = np.frombuffer(zlib.decompress(self.records[i]), np.uint8).reshape(3, 64, 64)
        img = torch.from_numpy(raw.astype(np.float32) / 255)
        for _ in range(3):
            img = nn.functional.avg_pool2d(img[None], 3, 1, 1)[0]
        return img, int(self.labels[i])


if __name__ == "__main__":
    torch.manual_seed(0)
    workers = max(1, multiprocessing.cpu_count() - 1) if FIXED else multiprocessing.cpu_count()
    loader = DataLoader(
        Compressed(), batch_size=32, shuffle=True, num_workers=workers, persistent_workers=True
    )
    model = nn.Sequential(
        nn.Conv2d(3, 16, 3, stride=2),
        nn.ReLU(),
        nn.Conv2d(16, 32, 3, stride=2),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(32, 10),
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(2):
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
