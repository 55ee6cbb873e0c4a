"""A step-based (not epoch-based) trainer pulls batches from an `InfiniteLoader` wrapper. The
wrapper's `__next__` was meant to restart the iterator when the loader is exhausted, but it
builds `iter(self.loader)` on every call and takes its first batch, so each batch starts a new
pass of the two-worker DataLoader (and its shuffle).

Planted: a new DataLoader iterator (two worker processes started) for every batch. --fixed: the
wrapper keeps its iterator and restarts it only on StopIteration.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

FIXED = "--fixed" in sys.argv


class InfiniteLoader:
    def __init__(self, loader):
        self.loader, self.it = loader, None

    def __iter__(self):
        return self

    def __next__(self):
        if not FIXED:
            return next(iter(self.loader))
        if self.it is None:
            self.it = iter(self.loader)
        try:
            return next(self.it)
        except StopIteration:
            self.it = iter(self.loader)
            return next(self.it)


def main():
    torch.manual_seed(0)
    x, y = torch.randn(4096, 20), torch.randint(0, 2, (4096,))
    loader = DataLoader(TensorDataset(x, y), batch_size=128, shuffle=True, num_workers=2)
    batches = InfiniteLoader(loader)
    model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(120):
        xb, yb = next(batches)
        loss = nn.functional.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 40 == 0:
            print(step, loss.item())


if __name__ == "__main__":
    main()
