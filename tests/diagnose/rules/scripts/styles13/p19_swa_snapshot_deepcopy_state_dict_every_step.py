"""Snapshot averaging written by hand: a `SnapshotKeeper` keeps the latest weights of the model
so that the last K snapshots can be averaged at the end of each epoch; a residual MLP.

Planted: `keeper.update(model)` runs after every optimizer step and stores
`copy.deepcopy(model.state_dict())`: every step copies every weight tensor (~4M parameters),
although only the snapshot at the end of each epoch is ever averaged. --fixed: the snapshot is
taken once per epoch.
"""

import copy
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class SnapshotKeeper:
    def __init__(self, keep=3):
        self.snapshots, self.keep = [], keep
        self.latest = None

    def update(self, model):
        self.latest = copy.deepcopy(model.state_dict())

    def close_epoch(self, model):
        if FIXED:
            self.update(model)
        self.snapshots = (self.snapshots + [self.latest])[-self.keep :]

    def average(self):
        return {k: sum(s[k] for s in self.snapshots) / len(self.snapshots) for k in self.latest}


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, d))

    def forward(self, x):
        return x + self.net(x)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 512), *[Block(512) for _ in range(8)], nn.Linear(512, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    keeper = SnapshotKeeper()
    x = torch.randn(4096, 32)
    y = x[:, :4].argmax(1)
    for epoch in range(3):
        for idx in torch.randperm(len(x)).split(128):
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            if not FIXED:
                keeper.update(model)
        keeper.close_epoch(model)
        print("epoch", epoch, float(loss), len(keeper.average()))
