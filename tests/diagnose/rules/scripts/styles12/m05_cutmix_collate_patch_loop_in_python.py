"""Image classification with CutMix done in the DataLoader's `collate_fn`: the collate stacks the
images, pairs each with a shuffled partner and pastes a random box of the partner into it, mixing
the one-hot labels by area. One worker feeds a small CNN.

Planted: the box is pasted pixel row by pixel row in Python (`for r in range(y0, y1): img[:, r,
x0:x1] = ...`) per sample, and the label mix is built per sample too: thousands of tiny tensor
ops per batch in the collate. --fixed: the box is pasted with one slice assignment per sample.
"""

import random
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv


class Images(Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 3, 32, 32, generator=g)
        self.y = (self.x[:, 0].mean((1, 2)) > 0).long()

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def cutmix_collate(samples):
    images = torch.stack([s[0] for s in samples])
    labels = nn.functional.one_hot(torch.stack([s[1] for s in samples]), 2).float()
    partner = torch.randperm(len(samples))
    mixed, targets = images.clone(), labels.clone()
    for i in range(len(samples)):
        y0, x0 = random.randrange(0, 16), random.randrange(0, 16)
        y1, x1 = y0 + 16, x0 + 16
        if FIXED:
            mixed[i, :, y0:y1, x0:x1] = images[partner[i], :, y0:y1, x0:x1]
        else:
            for r in range(y0, y1):
                for c in range(x0, x1):
                    mixed[i, :, r, c] = images[partner[i], :, r, c]
        lam = 1 - (y1 - y0) * (x1 - x0) / (32 * 32)
        targets[i] = lam * labels[i] + (1 - lam) * labels[partner[i]]
    return mixed, targets


if __name__ == "__main__":
    torch.manual_seed(0)
    random.seed(0)
    loader = DataLoader(
        Images(2048),
        batch_size=64,
        shuffle=True,
        collate_fn=cutmix_collate,
        num_workers=1,
        persistent_workers=True,
    )
    model = nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(32, 2),
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(3):
        for images, targets in loader:
            loss = nn.functional.cross_entropy(model(images), targets)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
