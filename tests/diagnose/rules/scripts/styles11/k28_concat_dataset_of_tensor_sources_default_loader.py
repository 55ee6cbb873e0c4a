"""Several data sources chained: three in-memory `TensorDataset`s (real, synthetic, and a
hard-example set) are combined with `ConcatDataset` and shuffled by a default DataLoader.
A tabular MLP classifier.

Planted: the ConcatDataset is fetched one sample at a time (the default sampler, index by index
through ConcatDataset's bisect and TensorDataset's per-row indexing) and collated back into
batches of 512, although every source is a tensor already in memory. --fixed: the three tensors
are concatenated once and batches are taken by slicing a shuffled index.
"""

import sys

import torch
from torch import nn
from torch.utils.data import ConcatDataset, DataLoader, TensorDataset

FIXED = "--fixed" in sys.argv


def source(n, shift, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 24, generator=g) + shift
    return x, (x[:, :4].sum(1) > shift * 4).long()


if __name__ == "__main__":
    torch.manual_seed(0)
    parts = [source(20000, 0.0, 1), source(10000, 0.5, 2), source(2000, -0.5, 3)]
    model = nn.Sequential(nn.Linear(24, 128), nn.ReLU(), nn.Linear(128, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    if FIXED:
        x = torch.cat([p[0] for p in parts])
        y = torch.cat([p[1] for p in parts])
    else:
        data = ConcatDataset([TensorDataset(*p) for p in parts])
        loader = DataLoader(data, batch_size=512, shuffle=True)
    for epoch in range(3):
        if FIXED:
            batches = ((x[i], y[i]) for i in torch.randperm(len(x)).split(512))
        else:
            batches = loader
        for xb, yb in batches:
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
