"""Tabular regression from a CSV file: the script writes a CSV of generated records at start (as
an export from a database would be), reads it back with the `csv` module into float tensors, and
standardises the columns; a small MLP with a Huber loss, RMSE printed per epoch.

Planted: the loader goes through a map-style `Dataset` whose `__getitem__` returns one row of the
in-memory tensors, so each batch of 512 is 512 Python calls and a collate of 512 small tensors.
--fixed: the batches are sliced from the tensors with a shuffled index (no per-row fetch).
"""

import csv
import os
import sys
import tempfile

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv
COLUMNS = [f"x{i}" for i in range(12)]


def write_csv(path, n=20000):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, 12, generator=g)
    y = x[:, :3].sum(1) * 2 + x[:, 3] * x[:, 4]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow([*COLUMNS, "target"])
        for row, t in zip(x.tolist(), y.tolist()):
            w.writerow([f"{v:.5f}" for v in row] + [f"{t:.5f}"])


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    x = torch.tensor([[float(r[c]) for c in COLUMNS] for r in rows])
    y = torch.tensor([float(r["target"]) for r in rows]).unsqueeze(1)
    return (x - x.mean(0)) / x.std(0), y


class Rows(Dataset):
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def sliced_batches(x, y, batch_size):
    perm = torch.randperm(len(x))
    for start in range(0, len(x), batch_size):
        idx = perm[start : start + batch_size]
        yield x[idx], y[idx]


if __name__ == "__main__":
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "records.csv")
        write_csv(path)
        x, y = read_csv(path)
    model = nn.Sequential(nn.Linear(12, 64), nn.ReLU(), nn.Linear(64, 1))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    loader = DataLoader(Rows(x, y), batch_size=512, shuffle=True)
    for epoch in range(4):
        batches = sliced_batches(x, y, 512) if FIXED else loader
        total = 0.0
        for xb, yb in batches:
            loss = nn.functional.huber_loss(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            rmse = (model(x) - y).pow(2).mean().sqrt()
        print("epoch", epoch, "rmse", float(rmse))
