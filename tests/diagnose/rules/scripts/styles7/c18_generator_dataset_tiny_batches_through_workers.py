"""An `IterableDataset` whose `__iter__` is a generator over shards of an in-memory NumPy table
(each worker takes its own shards via `get_worker_info()`), feeding a tabular MLP through a
DataLoader with two persistent worker processes.

Planted: the loader's batch size is 4 (kept from a debugging session), so each batch of four rows
crosses the worker hand-over on its own and the hand-over costs more than the batch's work.
--fixed: batches of 256.
"""

import sys

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

FIXED = "--fixed" in sys.argv
BATCH = 256 if FIXED else 4


class ShardedTable(IterableDataset):
    def __init__(self, shards):
        self.shards = shards

    def __iter__(self):
        info = get_worker_info()
        mine = self.shards if info is None else self.shards[info.id :: info.num_workers]
        for x, y in mine:
            for i in range(len(y)):
                yield x[i], y[i]


if __name__ == "__main__":
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    shards = []
    for _ in range(8):
        x = rng.normal(size=(1000, 20)).astype(np.float32)
        shards.append((x, (x[:, 0] * x[:, 1] > 0).astype(np.int64)))
    loader = DataLoader(ShardedTable(shards), batch_size=BATCH, num_workers=2,
                        persistent_workers=True)
    model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(2):
        for xb, yb in loader:
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, loss.item())
