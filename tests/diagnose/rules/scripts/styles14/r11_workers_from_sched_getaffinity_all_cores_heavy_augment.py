"""Spectrogram-like images augmented per sample (random time and frequency masks and a blur
done with NumPy), read through workers whose count is the set of cores the process may run on
(`len(os.sched_getaffinity(0))`), "so the loader uses what the job was given".

Planted: a worker on every core the process may use: the workers and the training step share
the same cores, and the steps wait for data.
--fixed: one core left to the training process (cores - 1 workers, at least 1).
"""

import os
import sys

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv


def usable_cores():
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


class MaskedSpectrograms(Dataset):
    def __init__(self, n=3000):
        rng = np.random.default_rng(0)
        self.base = rng.standard_normal((64, 96, 96)).astype(np.float32)
        self.labels = rng.integers(0, 8, n)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        rng = np.random.default_rng(i)
        spec = self.base[i % 64].copy()
        for _ in range(4):
            t0, f0 = rng.integers(0, 80, 2)
            spec[:, t0 : t0 + 12] = 0
            spec[f0 : f0 + 12] = 0
        for _ in range(16):
            spec = (
                spec
                + np.roll(spec, 1, 0)
                + np.roll(spec, -1, 0)
                + np.roll(spec, 1, 1)
                + np.roll(spec, -1, 1)
            ) / 5
        return torch.from_numpy(spec[None]), int(self.labels[i])


if __name__ == "__main__":
    torch.manual_seed(0)
    cores = usable_cores()
    workers = max(1, cores - 1) if FIXED else cores
    loader = DataLoader(
        MaskedSpectrograms(),
        batch_size=32,
        shuffle=True,
        num_workers=workers,
        persistent_workers=True,
    )
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, stride=2),
        nn.ReLU(),
        nn.Conv2d(16, 32, 3, stride=2),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(32, 8),
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(2):
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
