"""A class-balanced `Sampler` subclass that yields indices from NumPy (a permutation per class,
interleaved), over a `TensorDataset` of in-memory features, with a `DataLoader` that batches it.

Planted: the default loader fetches the in-memory tensors one sample at a time (`__getitem__` per
index, then `collate` stacks 512 pairs): the batch is assembled sample by sample.
--fixed: the sampler's indices are cut into batches and each batch is one indexing of the
tensors (`x[idx]`).
"""

import sys

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Sampler, TensorDataset

FIXED = "--fixed" in sys.argv


class BalancedSampler(Sampler):
    def __init__(self, labels, seed=0):
        self.by_class = [np.flatnonzero(labels == c) for c in np.unique(labels)]
        self.rng = np.random.default_rng(seed)

    def __len__(self):
        return min(len(ix) for ix in self.by_class) * len(self.by_class)

    def __iter__(self):
        n = min(len(ix) for ix in self.by_class)
        perms = [self.rng.permutation(ix)[:n] for ix in self.by_class]
        yield from np.stack(perms, 1).reshape(-1).tolist()


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(30000, 64)
    y = (x[:, 0] + 0.5 * x[:, 1] > 0.3).long()
    sampler = BalancedSampler(y.numpy())
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    if FIXED:

        def batches():
            order = torch.tensor(list(sampler))
            for idx in order.split(512):
                yield x[idx], y[idx]
    else:
        loader = DataLoader(TensorDataset(x, y), batch_size=512, sampler=sampler)

        def batches():
            yield from loader

    for epoch in range(3):
        for xb, yb in batches():
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
