"""Image-like Dataset whose __getitem__ builds each sample with per-pixel Python work.

Planted: the sample is synthesised pixel row by pixel row on every fetch. --fixed: the samples are
built once in __init__ and __getitem__ only indexes.
"""

import math
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


def synthesise(i, size=12):
    rows = []
    for r in range(size):
        rows.append([math.sin(0.3 * i + r * c) for c in range(size)])
    return torch.tensor(rows).unsqueeze(0)


class Patterns(Dataset):
    def __init__(self, n, cached):
        self.n = n
        self.cache = torch.stack([synthesise(i) for i in range(n)]) if cached else None

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        x = self.cache[i] if self.cache is not None else synthesise(i)
        return x, i % 3


def main():
    cached = "--fixed" in sys.argv
    torch.manual_seed(0)
    loader = DataLoader(Patterns(1536, cached), batch_size=64, shuffle=True)
    classifier = nn.Sequential(nn.Flatten(), nn.Linear(144, 64), nn.ReLU(), nn.Linear(64, 3))
    opt = torch.optim.SGD(classifier.parameters(), lr=0.05)
    for _ in range(3):
        for x, y in loader:
            opt.zero_grad()
            nn.functional.cross_entropy(classifier(x), y).backward()
            opt.step()


if __name__ == "__main__":
    main()
