"""Seed 001's CIFAR-style Dataset: each image is converted in __getitem__, in float64."""

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


class Dataset(torch.utils.data.Dataset):
    def __init__(self, n=512):
        rng = np.random.default_rng(0)
        self.imgs = rng.integers(0, 256, size=(n, 96, 96, 3), dtype=np.uint8)
        self.labels = rng.integers(0, 10, size=n)

    def __len__(self):
        return len(self.imgs)

    def __getitem__(self, ix):
        img = self.imgs[ix]
        img = (img / 255.) ** 0.8  # gamma, in float64 like the rest of the NumPy pipeline
        lo, hi = np.percentile(img, (2, 98))  # auto-contrast
        img = np.clip((img - lo) / (hi - lo + 1e-6), 0, 1)
        img = (img - img.mean()) / (img.std() + 1e-6)  # per-image standardise
        return torch.from_numpy(img).permute(2, 0, 1).float(), torch.tensor(self.labels[ix]).long()


def main():
    torch.manual_seed(0)
    dl = torch.utils.data.DataLoader(Dataset(), batch_size=32, shuffle=True)
    model = nn.Sequential(nn.AvgPool2d(12), nn.Flatten(), nn.Linear(3 * 8 * 8, 10))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(2):
        for x, y in dl:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
