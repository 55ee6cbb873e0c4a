"""Mixup with label smoothing: each batch is mixed with a second "partner" batch using a
Beta(0.4, 0.4) coefficient, the targets are smoothed one-hot vectors mixed the same way, a soft
cross-entropy; a conv net on synthetic 3x24x24 images from a Dataset with two workers.

Planted: the partner batch is drawn with `next(iter(loader))` inside the loop, so every step
builds a new DataLoader iterator (and starts its two workers) just to fetch one batch.
--fixed: the partner is the same batch in a shuffled order (`x[torch.randperm(len(x))]`).
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv
CLASSES = 5


class Shapes(Dataset):
    def __init__(self, n=2560):
        g = torch.Generator().manual_seed(0)
        self.labels = torch.randint(0, CLASSES, (n,), generator=g)
        self.base = torch.randn(CLASSES, 3, 24, 24, generator=g)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        label = self.labels[i]
        return self.base[label] + 0.5 * torch.randn(3, 24, 24), label


def smooth_one_hot(y, eps=0.1):
    return torch.full((len(y), CLASSES), eps / CLASSES).scatter_(
        1, y[:, None], 1 - eps + eps / CLASSES
    )


if __name__ == "__main__":
    torch.manual_seed(0)
    loader = DataLoader(Shapes(), batch_size=64, shuffle=True, num_workers=2)
    model = nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(32, CLASSES),
    )
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    beta = torch.distributions.Beta(0.4, 0.4)
    for epoch in range(2):
        for x, y in loader:
            if FIXED:
                perm = torch.randperm(len(x))
                x2, y2 = x[perm], y[perm]
            else:
                x2, y2 = next(iter(loader))
            lam = float(beta.sample())
            n = min(len(x), len(x2))
            mixed = lam * x[:n] + (1 - lam) * x2[:n]
            target = lam * smooth_one_hot(y[:n]) + (1 - lam) * smooth_one_hot(y2[:n])
            loss = -(target * model(mixed).log_softmax(1)).sum(1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, loss.item())
