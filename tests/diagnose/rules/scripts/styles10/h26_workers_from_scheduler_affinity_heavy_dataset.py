"""A DataLoader whose worker count is "auto-tuned" by a helper that asks the OS how many cores
this process may use (`len(os.sched_getaffinity(0))`), with an augmenting map-style dataset
(random crops, flips, colour jitter in NumPy) feeding a small CNN; generated 64x64 images.

Planted: the helper returns every core this process may use, so the workers take the core the
training step needs (2 workers on a 2-core machine): the step and the workers contend.
--fixed: the helper leaves a core for the training process (`cores - 1`).
"""

import os
import sys

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv


def auto_workers():
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, cores - 1) if FIXED else cores


class Augmenting(Dataset):
    def __init__(self, n):
        rng = np.random.default_rng(0)
        self.images = rng.integers(0, 255, (n, 72, 72, 3), dtype=np.uint8)
        self.labels = rng.integers(0, 8, n)

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        rng = np.random.default_rng(i)
        top, left = rng.integers(0, 9, 2)
        img = self.images[i, top : top + 64, left : left + 64].astype(np.float32) / 255
        if rng.random() < 0.5:
            img = img[:, ::-1]
        img = img * rng.uniform(0.8, 1.2, 3) + rng.uniform(-0.1, 0.1, 3)
        return torch.from_numpy(np.ascontiguousarray(img.transpose(2, 0, 1))), int(self.labels[i])


if __name__ == "__main__":
    torch.manual_seed(0)
    loader = DataLoader(Augmenting(4096), batch_size=64, shuffle=True,
                        num_workers=auto_workers(), persistent_workers=True)
    model = nn.Sequential(nn.Conv2d(3, 32, 3, stride=2, padding=1), nn.ReLU(),
                          nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.ReLU(),
                          nn.Conv2d(64, 64, 3, stride=2, padding=1), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 8))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(3):
        for xb, yb in loader:
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, loss.item())
