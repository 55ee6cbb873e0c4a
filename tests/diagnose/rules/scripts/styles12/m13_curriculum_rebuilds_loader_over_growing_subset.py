"""Curriculum by data size: the training set is sorted by a difficulty score and each epoch
trains on a larger prefix of it (25%, 50%, 75%, 100%, 100%...). Samples are augmented at fetch
time (random crop of a padded image), one worker. A small CNN.

Planted: each epoch builds a new `DataLoader(Subset(data, prefix), num_workers=1)`, so a worker
process is started (and torch imported in it) every epoch, and the first batches of the epoch
wait for it. --fixed: one persistent loader whose sampler reads the current curriculum size.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, Sampler, Subset

FIXED = "--fixed" in sys.argv


class Padded(Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 3, 24, 24, generator=g)
        self.y = (self.x[:, 1].mean((1, 2)) > 0).long()
        self.order = self.x.std((1, 2, 3)).argsort().tolist()

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        img = nn.functional.pad(self.x[i], (4, 4, 4, 4))
        r, c = torch.randint(0, 9, (2,)).tolist()
        return img[:, r : r + 24, c : c + 24], self.y[i]


class CurriculumSampler(Sampler):
    def __init__(self, order):
        self.order, self.size = order, len(order)

    def __iter__(self):
        prefix = self.order[: self.size]
        return iter([prefix[i] for i in torch.randperm(len(prefix)).tolist()])

    def __len__(self):
        return self.size


if __name__ == "__main__":
    torch.manual_seed(0)
    data = Padded(1600)
    sampler = CurriculumSampler(data.order)
    persistent = DataLoader(
        data, batch_size=64, sampler=sampler, num_workers=1, persistent_workers=True
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
    for epoch in range(8):
        size = min(len(data), len(data) * (epoch + 1) // 4)
        if FIXED:
            sampler.size = size
            loader = persistent
        else:
            loader = DataLoader(
                Subset(data, data.order[:size]), batch_size=64, shuffle=True, num_workers=1
            )
        for img, label in loader:
            loss = nn.functional.cross_entropy(model(img), label)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, size, float(loss))
