"""Image-like training with on-the-fly augmentation in the Dataset (random crop, flip and a
colour jitter written with tensor ops, per sample), the worker count taken from the machine:
`num_workers=os.cpu_count()`, "as many workers as cores". A small conv net.

Planted: on a machine with C cores, C workers plus the training process compete for C cores:
the training step is preempted by its own workers. --fixed: `os.cpu_count() - 1` workers (at
least one).
"""

import os
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv
WORKERS = max(1, (os.cpu_count() or 2) - 1) if FIXED else (os.cpu_count() or 2)


class Augmented(Dataset):
    def __init__(self, n=3000):
        g = torch.Generator().manual_seed(0)
        self.x = torch.rand(n, 3, 40, 40, generator=g)
        self.y = (self.x[:, 0].mean((1, 2)) > 0.5).long()

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        img = self.x[i]
        top, left = torch.randint(0, 9, (2,)).tolist()
        img = img[:, top : top + 32, left : left + 32]
        if torch.rand(1).item() < 0.5:
            img = img.flip(-1)
        jitter = 1 + 0.2 * (torch.rand(3, 1, 1) - 0.5)
        img = (img * jitter).clamp(0, 1)
        gray = img.mean(0, keepdim=True)
        img = gray + (img - gray) * (1 + 0.3 * (torch.rand(1) - 0.5))
        return img, self.y[i]


if __name__ == "__main__":
    torch.manual_seed(0)
    loader = DataLoader(Augmented(), batch_size=64, shuffle=True, num_workers=WORKERS,
                        persistent_workers=True)
    model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(64 * 64, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(3):
        for xb, yb in loader:
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, loss.item())
