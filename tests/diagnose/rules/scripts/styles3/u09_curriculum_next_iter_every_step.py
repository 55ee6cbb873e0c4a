"""Curriculum sampling: the training draws from an "easy" loader first and a "hard" loader
later, picking one batch per step with `next(iter(loader))` from whichever loader the schedule
names (a shuffled loader with a worker process).

Planted: a new DataLoader iterator (and its worker) for every batch. --fixed: one iterator per
loader, its worker kept (persistent_workers) when it starts the next pass.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Spectra(Dataset):
    """Signals in memory; each sample is its spectrum's first 20 magnitudes (per-sample work
    that earns the loader its worker processes)."""

    def __init__(self, signals, labels):
        self.signals, self.labels = signals, labels

    def __len__(self):
        return len(self.signals)

    def __getitem__(self, i):
        return torch.fft.rfft(self.signals[i]).abs()[:20], self.labels[i]


def endless(loader):
    while True:
        yield from loader


def main():
    torch.manual_seed(0)
    x = torch.randn(8000, 512)
    difficulty = x[:, :64].abs().mean(1)
    y = (x[:, :8].sum(1) > 0).long()
    easy = difficulty < difficulty.median()
    fixed = "--fixed" in sys.argv
    loaders = {
        "easy": DataLoader(Spectra(x[easy], y[easy]), batch_size=64, shuffle=True,
                           num_workers=1, persistent_workers=fixed),
        "hard": DataLoader(Spectra(x[~easy], y[~easy]), batch_size=64, shuffle=True,
                           num_workers=1, persistent_workers=fixed),
    }
    streams = {k: endless(v) for k, v in loaders.items()}
    model = nn.Sequential(nn.Linear(20, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                          nn.Linear(1024, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(400):
        level = "easy" if step < 200 else "hard"
        if fixed:
            xb, yb = next(streams[level])
        else:
            xb, yb = next(iter(loaders[level]))
        loss = nn.functional.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            print(step, level, loss.item())


if __name__ == "__main__":
    main()
