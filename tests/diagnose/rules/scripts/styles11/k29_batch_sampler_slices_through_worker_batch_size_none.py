"""Batched fetching done "right" for in-memory data: the dataset's `__getitem__` takes a list of
indices and returns a whole batch by tensor indexing, and the DataLoader gets
`sampler=BatchSampler(RandomSampler(...), 256)` with `batch_size=None` (no collate). A
regression MLP on generated features.

Planted: the loader also gets `num_workers=2` ("data loading in the background"): the batch is
one indexing op, and handing it from a worker to the training process (pickling through shared
memory, the queue) costs more than making it. --fixed: `num_workers=0`.
"""

import sys

import torch
from torch import nn
from torch.utils.data import BatchSampler, DataLoader, Dataset, RandomSampler

FIXED = "--fixed" in sys.argv


class InMemoryBatches(Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 256, generator=g)
        self.y = self.x[:, :16].sum(1, keepdim=True)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, indices):
        return self.x[indices], self.y[indices]


if __name__ == "__main__":
    torch.manual_seed(0)
    data = InMemoryBatches(60000)
    loader = DataLoader(data, sampler=BatchSampler(RandomSampler(data), 256, drop_last=True),
                        batch_size=None, num_workers=0 if FIXED else 2,
                        persistent_workers=not FIXED)
    model = nn.Sequential(nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for epoch in range(3):
        for xb, yb in loader:
            loss = nn.functional.mse_loss(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
