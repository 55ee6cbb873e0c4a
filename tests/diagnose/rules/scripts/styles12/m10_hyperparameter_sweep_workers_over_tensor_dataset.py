"""A learning-rate and weight-decay sweep run in one process: for each of six settings a fresh
model is trained for two epochs from the same persistent DataLoader and the best setting is
kept. The data is a generated in-memory `TensorDataset`.

Planted: the loader has `num_workers=1` over the in-memory TensorDataset: a worker process
indexes rows one by one, collates them and pickles each batch back through a queue, work that a
slice of the tensors would do in microseconds. --fixed: batches are sliced from the tensors in
the training process (a shuffled index split into batches).
"""

import itertools
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

FIXED = "--fixed" in sys.argv


def make_batches(x, y, loader):
    if FIXED:
        return [(x[i], y[i]) for i in torch.randperm(len(x)).split(128)]
    return loader


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(8000, 48)
    y = (x[:, :6].sum(1) > 0).long()
    loader = DataLoader(
        TensorDataset(x, y), batch_size=128, shuffle=True, num_workers=1, persistent_workers=True
    )
    results = {}
    for lr, wd in itertools.product([1e-3, 3e-3, 1e-2], [0.0, 1e-2]):
        model = nn.Sequential(nn.Linear(48, 128), nn.ReLU(), nn.Linear(128, 2))
        opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=wd)
        for _epoch in range(2):
            for xb, yb in make_batches(x, y, loader):
                loss = nn.functional.cross_entropy(model(xb), yb)
                opt.zero_grad()
                loss.backward()
                opt.step()
        results[(lr, wd)] = float(loss)
        print("lr", lr, "wd", wd, results[(lr, wd)])
    print("best", min(results, key=results.get))
