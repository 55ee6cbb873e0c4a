"""Step-count driven loop in a Runner class; each step takes next(iter(loader)).

Planted: a new DataLoader iterator for every batch. --fixed: one iterator, renewed on StopIteration.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Runner:
    def __init__(self, max_steps, reuse):
        torch.manual_seed(0)
        ds = TensorDataset(torch.randn(2048, 64), torch.randint(0, 5, (2048,)))
        self.loader = DataLoader(ds, batch_size=64, shuffle=True, num_workers=1)
        self.net = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 5))
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.05)
        self.max_steps = max_steps
        self.reuse = reuse
        self._it = None

    def next_batch(self):
        if not self.reuse:
            return next(iter(self.loader))
        try:
            return next(self._it)
        except (StopIteration, TypeError):
            self._it = iter(self.loader)
            return next(self._it)

    def run(self):
        step = 0
        while step < self.max_steps:
            xb, yb = self.next_batch()
            self.opt.zero_grad()
            nn.functional.cross_entropy(self.net(xb), yb).backward()
            self.opt.step()
            step += 1


if __name__ == "__main__":
    Runner(200, reuse="--fixed" in sys.argv).run()
