"""An image Dataset class whose __getitem__ does random-crop + flip + normalisation with Python
loops over pixels (written before the author knew about tensor slicing).

Planted: per-pixel Python work in __getitem__. --fixed: the same augmentation with tensor ops.
"""

import random
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv


class AugmentedImages(Dataset):
    def __init__(self, n=2048, size=16, pad=2):
        g = torch.Generator().manual_seed(0)
        self.images = torch.randn(n, size + 2 * pad, size + 2 * pad, generator=g)
        self.labels = torch.randint(0, 5, (n,), generator=g)
        self.size, self.pad = size, pad
        self.mean, self.std = 0.0, 1.0

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        img = self.images[i]
        top, left = random.randint(0, 2 * self.pad), random.randint(0, 2 * self.pad)
        flip = random.random() < 0.5
        if FIXED:
            crop = img[top:top + self.size, left:left + self.size]
            crop = crop.flip(1) if flip else crop
            return (crop - self.mean) / self.std, self.labels[i]
        out = torch.empty(self.size, self.size)
        rows = img.tolist()
        for r in range(self.size):
            for c in range(self.size):
                src_c = self.size - 1 - c if flip else c
                out[r, c] = (rows[top + r][left + src_c] - self.mean) / self.std
        return out, self.labels[i]


def main():
    random.seed(0)
    torch.manual_seed(0)
    loader = DataLoader(AugmentedImages(), batch_size=64, shuffle=True)
    net = nn.Sequential(nn.Unflatten(1, (1, 16)), nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
                        nn.MaxPool2d(2), nn.Flatten(), nn.Linear(1024, 5))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3, foreach=True)
    for epoch in range(2):
        for images, labels in loader:
            loss = nn.functional.cross_entropy(net(images), labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"epoch {epoch}: {loss.item():.3f}")


if __name__ == "__main__":
    main()
