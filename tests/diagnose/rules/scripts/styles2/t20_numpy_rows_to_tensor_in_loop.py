"""Features live in a list of NumPy rows (from a CSV reader); every batch is made with
torch.tensor(list_of_arrays) inside the training loop.

Planted: torch.tensor on a list of NumPy arrays per batch. --fixed: one np.stack and
torch.from_numpy per batch.
"""

import sys

import numpy as np
import torch
from torch import nn


def read_rows(n=20_000, width=64, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(width).astype(np.float32) for _ in range(n)], rng.integers(0, 2, n)


def main():
    fixed = "--fixed" in sys.argv
    torch.manual_seed(0)
    rows, targets = read_rows()
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=True)
    batch = 256
    for epoch in range(2):
        for start in range(0, len(rows), batch):
            chunk = rows[start:start + batch]
            xb = torch.from_numpy(np.stack(chunk)) if fixed else torch.tensor(chunk)
            yb = torch.from_numpy(targets[start:start + batch])
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"epoch {epoch}: {loss.item():.3f}")


if __name__ == "__main__":
    main()
