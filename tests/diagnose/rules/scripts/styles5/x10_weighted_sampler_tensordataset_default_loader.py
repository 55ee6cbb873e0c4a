"""An imbalanced fraud-detection style table: the author balances classes with a
`WeightedRandomSampler` over a `TensorDataset` held in memory and a large batch, through the
default DataLoader, which fetches every row with its own `__getitem__` and stacks them.

Planted: 1024 single-row fetches + a collate per batch from in-memory tensors. --fixed: draws
the epoch's indices with one torch.multinomial and indexes the tensors once per batch.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, WeightedRandomSampler

FIXED = "--fixed" in sys.argv


def make_table(n=40000):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, 30, generator=g)
    y = (torch.rand(n, generator=g) < 0.03).long()
    x[y == 1] += 0.8
    return x, y


def main():
    torch.manual_seed(0)
    x, y = make_table()
    counts = torch.bincount(y)
    weights = (1.0 / counts.float())[y]
    model = nn.Sequential(nn.Linear(30, 64), nn.ReLU(), nn.Linear(64, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    batch, steps = 1024, len(x) // 1024
    if FIXED:
        def batches():
            drawn = torch.multinomial(weights, steps * batch, replacement=True)
            for idx in drawn.split(batch):
                yield x[idx], y[idx]
    else:
        sampler = WeightedRandomSampler(weights, num_samples=steps * batch, replacement=True)
        loader = DataLoader(TensorDataset(x, y), batch_size=batch, sampler=sampler)

        def batches():
            return loader
    for epoch in range(2):
        for xb, yb in batches():
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
