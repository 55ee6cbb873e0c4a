"""A `fit()` on an nn.Module that wraps its in-memory arrays in a small map-style Dataset class
(`__getitem__` returns one row of each tensor) and a DataLoader with batch_size=256: each batch
is built from 256 single-row fetches and a collate.

Planted: in-memory tensors fetched one sample at a time. --fixed: batches are sliced from
shuffled indices (the same batches, one indexing op each).
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Rows(Dataset):
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(12, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, x):
        return self.net(x)

    def batches(self, x, y, batch, fast):
        if fast:
            perm = torch.randperm(len(x))
            return [(x[i], y[i]) for i in perm.split(batch)]
        return DataLoader(Rows(x, y), batch_size=batch, shuffle=True)

    def fit(self, x, y, epochs=3, batch=256, fast=False):
        opt = torch.optim.Adam(self.parameters(), lr=1e-3)
        for epoch in range(epochs):
            for xb, yb in self.batches(x, y, batch, fast):
                loss = nn.functional.mse_loss(self(xb), yb)
                opt.zero_grad()
                loss.backward()
                opt.step()
            print(epoch, loss.item())


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(40000, 12)
    y = x[:, :2].sum(1, keepdim=True)
    Regressor().fit(x, y, fast="--fixed" in sys.argv)
