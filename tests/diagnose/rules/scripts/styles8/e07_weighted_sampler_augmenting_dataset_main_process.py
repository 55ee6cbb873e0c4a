"""Class imbalance handled with a `WeightedRandomSampler` (weights 1/class frequency) over a
dataset that augments each sample (random crop of a longer window, gain, additive noise, a
random time shift) with torch ops; a GRU classifier of sensor windows; accuracy per class
printed at the end of each epoch.

Planted: the `DataLoader` builds every batch in the training process (`num_workers` left at 0)
while the per-sample augmentation costs about as much as the step. --fixed: two persistent
workers.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, WeightedRandomSampler

FIXED = "--fixed" in sys.argv


class SensorWindows(Dataset):
    def __init__(self, n=3000, channels=6, length=256, window=128):
        g = torch.Generator().manual_seed(0)
        self.labels = torch.multinomial(
            torch.tensor([0.7, 0.2, 0.1]), n, replacement=True, generator=g
        )
        t = torch.linspace(0, 12.0, length)
        self.signals = torch.sin(
            t[None, None] * (1 + self.labels[:, None, None])
        ) + 0.3 * torch.randn(n, channels, length, generator=g)
        self.window = window

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        signal = self.signals[i]
        start = int(torch.randint(0, signal.shape[1] - self.window, ()))
        crop = signal[:, start : start + self.window]
        crop = crop * torch.empty(crop.shape[0], 1).uniform_(0.8, 1.2)
        crop = crop + 0.05 * torch.randn_like(crop)
        crop = torch.roll(crop, int(torch.randint(-8, 8, ())), dims=1)
        crop = (crop - crop.mean(1, keepdim=True)) / (crop.std(1, keepdim=True) + 1e-5)
        return crop.T.contiguous(), self.labels[i]


class GRUClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(6, 32, batch_first=True)
        self.out = nn.Linear(32, 3)

    def forward(self, x):
        return self.out(self.gru(x)[1][-1])


if __name__ == "__main__":
    torch.manual_seed(0)
    data = SensorWindows()
    counts = torch.bincount(data.labels).float()
    sampler = WeightedRandomSampler(
        (1.0 / counts)[data.labels], num_samples=len(data), replacement=True
    )
    workers = 2 if FIXED else 0
    loader = DataLoader(
        data, batch_size=64, sampler=sampler, num_workers=workers, persistent_workers=workers > 0
    )
    model = GRUClassifier()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    for epoch in range(2):
        hits, seen = torch.zeros(3), torch.zeros(3)
        for xb, yb in loader:
            logits = model(xb)
            loss = nn.functional.cross_entropy(logits, yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            seen += torch.bincount(yb, minlength=3)
            hits += torch.bincount(yb[logits.argmax(1) == yb], minlength=3)
        print("epoch", epoch, (hits / seen).tolist())
