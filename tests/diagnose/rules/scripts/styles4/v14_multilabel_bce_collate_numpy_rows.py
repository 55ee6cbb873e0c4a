"""A multi-label classifier (BCEWithLogitsLoss, 20 labels) over feature vectors stored as a list
of NumPy arrays (as loaded from a pickle). The custom collate_fn stacks a batch with
torch.tensor(list of arrays).

Planted: torch.tensor on a list of NumPy arrays in collate_fn (an element-by-element copy).
--fixed: the collate stacks with np.stack and torch.from_numpy.
"""

import sys

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader

FIXED = "--fixed" in sys.argv


def collate(samples):
    feats, labels = zip(*samples)
    if FIXED:
        return torch.from_numpy(np.stack(feats)), torch.from_numpy(np.stack(labels))
    return torch.tensor(feats), torch.tensor(labels)


def main():
    rng = np.random.default_rng(0)
    records = []
    for _ in range(8192):
        f = rng.normal(size=512).astype(np.float32)
        labels = (f[:20] > 0.5).astype(np.float32)
        records.append((f, labels))
    loader = DataLoader(records, batch_size=256, shuffle=True, collate_fn=collate)
    model = nn.Sequential(nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 20))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.BCEWithLogitsLoss()
    for epoch in range(3):
        for x, y in loader:
            loss = criterion(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"epoch {epoch} bce {loss.item():.4f}")


if __name__ == "__main__":
    main()
