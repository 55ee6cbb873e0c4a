"""k-fold cross-validation: `for fold in range(K)` builds the fold's train/validation subsets,
a fresh model and optimizer, trains a few epochs and records the fold's score; the mean score is
printed at the end. A small CNN on 12x12 single-channel "digits" in a Dataset.

Planted: the fold's training DataLoader uses two worker processes without
`persistent_workers`, so the workers are started again at every epoch of every fold.
--fixed: persistent_workers=True (workers start once per fold).
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, Subset

FIXED = "--fixed" in sys.argv
K, EPOCHS = 4, 4


class Digits(Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(0)
        self.y = torch.randint(0, 10, (n,), generator=g)
        self.x = torch.randn(n, 1, 12, 12, generator=g) + self.y[:, None, None, None] * 0.1

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def make_model():
    return nn.Sequential(nn.Conv2d(1, 8, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 10 * 10, 10))


def run_fold(dataset, train_idx, val_idx):
    model = make_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    loader = DataLoader(Subset(dataset, train_idx), batch_size=128, shuffle=True,
                        num_workers=2, persistent_workers=FIXED)
    for _ in range(EPOCHS):
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    model.eval()
    with torch.no_grad():
        xv = dataset.x[val_idx]
        return (model(xv).argmax(1) == dataset.y[val_idx]).float().mean().item()


if __name__ == "__main__":
    torch.manual_seed(0)
    data = Digits(1600)
    folds = torch.randperm(len(data)).chunk(K)
    scores = []
    for k in range(K):
        val_idx = folds[k].tolist()
        train_idx = torch.cat([f for j, f in enumerate(folds) if j != k]).tolist()
        scores.append(run_fold(data, train_idx, val_idx))
        print(f"fold {k}: {scores[-1]:.3f}")
    print("mean", sum(scores) / K)
