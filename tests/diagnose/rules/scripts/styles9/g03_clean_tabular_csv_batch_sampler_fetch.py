"""Clean: tabular classification from a CSV file written at start and read back with NumPy
(`np.loadtxt`), then held as tensors; the DataLoader fetches whole batches (a `BatchSampler` as
the sampler and `batch_size=None`, with a Dataset whose `__getitem__` takes a list of indices),
so each batch is one indexing operation. Validation accuracy per epoch under `no_grad`.

No planted problem; `--fixed` changes nothing (kept for the bench's control run).
"""

import os
import tempfile

import numpy as np
import torch
from torch import nn
from torch.utils.data import BatchSampler, DataLoader, Dataset, RandomSampler


class BatchFetch(Dataset):
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, rows):
        return self.x[rows], self.y[rows]


if __name__ == "__main__":
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    table = rng.standard_normal((20000, 9)).astype(np.float32)
    table[:, 8] = (table[:, :3].sum(1) > 0).astype(np.float32)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "table.csv")
        np.savetxt(path, table, delimiter=",", fmt="%.5f")
        data = torch.from_numpy(np.loadtxt(path, delimiter=",", dtype=np.float32))
    x, y = data[:, :8], data[:, 8].long()
    train = BatchFetch(x[:18000], y[:18000])
    loader = DataLoader(train, sampler=BatchSampler(RandomSampler(train), 256, False),
                        batch_size=None)
    model = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 2))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for epoch in range(4):
        for xb, yb in loader:
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            acc = (model(x[18000:]).argmax(1) == y[18000:]).float().mean()
        model.train()
        print("epoch", epoch, "acc", acc.item())
