"""K-fold cross-validation of a tabular classifier: the full data is one `TensorDataset`, each
fold trains on a `Subset` of it (the other folds' indices) and scores the held-out fold, and the
mean accuracy over the five folds is printed.

Planted: each fold's training `DataLoader(Subset(data, idx), batch_size=512, shuffle=True)`
fetches sample by sample (Subset's and TensorDataset's `__getitem__` per row) and collates 512
rows back into a batch, although the data is one tensor in memory. --fixed: the fold's rows are
indexed out of the tensors once and batches are slices of a shuffled index.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Subset, TensorDataset

FIXED = "--fixed" in sys.argv
FOLDS = 5


def batches(data, idx, x, y):
    if FIXED:
        xs, ys = x[idx], y[idx]
        return [(xs[b], ys[b]) for b in torch.randperm(len(idx)).split(512)]
    return DataLoader(Subset(data, idx.tolist()), batch_size=512, shuffle=True)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(30000, 20)
    y = (x[:, :3].sum(1) + 0.3 * torch.randn(len(x)) > 0).long()
    data = TensorDataset(x, y)
    folds = torch.randperm(len(x)).chunk(FOLDS)
    scores = []
    for k in range(FOLDS):
        train_idx = torch.cat([f for j, f in enumerate(folds) if j != k])
        model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 2))
        opt = torch.optim.Adam(model.parameters(), lr=3e-3)
        for _epoch in range(2):
            for xb, yb in batches(data, train_idx, x, y):
                loss = nn.functional.cross_entropy(model(xb), yb)
                opt.zero_grad()
                loss.backward()
                opt.step()
        with torch.no_grad():
            held = folds[k]
            scores.append((model(x[held]).argmax(1) == y[held]).float().mean().item())
        print("fold", k, scores[-1])
    print("cv accuracy", sum(scores) / FOLDS)
