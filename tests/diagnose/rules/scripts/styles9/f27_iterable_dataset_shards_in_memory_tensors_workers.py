"""An `IterableDataset` over in-memory tensors, sharded across DataLoader workers with
`get_worker_info()` (each worker yields every n-th shuffled example), as streaming-dataset
tutorials show; the examples are already tensors in memory. A small MLP classifier.

Planted: the stream is read through `num_workers=2` with `batch_size=128`, so every batch is
built in a worker from rows already in memory and pickled back to the training process; the
hand-over costs more than building the batch. --fixed: `num_workers=0`.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

FIXED = "--fixed" in sys.argv


class ShardedTensors(IterableDataset):
    def __init__(self, x, y):
        self.x, self.y, self.epoch = x, y, 0

    def __iter__(self):
        info = get_worker_info()
        wid, n = (info.id, info.num_workers) if info else (0, 1)
        order = torch.randperm(len(self.x), generator=torch.Generator().manual_seed(self.epoch))
        for i in order[wid::n].tolist():
            yield self.x[i], self.y[i]


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(12000, 128)
    y = (x[:, :5].sum(1) > 0).long()
    data = ShardedTensors(x, y)
    loader = DataLoader(data, batch_size=128, num_workers=0 if FIXED else 2)
    model = nn.Sequential(nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(3):
        data.epoch = epoch
        for xb, yb in loader:
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, loss.item())
