"""A training loop inside a context-manager class (`with Trainer(cfg) as t: t.run()`): `__enter__`
builds the model and optimizer, `__exit__` prints a summary. The configuration is an
`argparse.Namespace` built from a dict (`Namespace(**defaults)`).

Planted: `batch_size=2` in the defaults dict: a 1024-wide MLP runs every step on two rows, so the
step is per-op overhead.
--fixed: batch size 256.
"""

import sys
from argparse import Namespace

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
DEFAULTS = {"batch_size": 256 if FIXED else 2, "width": 1024, "epochs": 2, "lr": 0.02}


class Trainer:
    def __init__(self, cfg):
        self.cfg = cfg

    def __enter__(self):
        self.model = nn.Sequential(
            nn.Linear(512, self.cfg.width),
            nn.ReLU(),
            nn.Linear(self.cfg.width, self.cfg.width),
            nn.ReLU(),
            nn.Linear(self.cfg.width, 10),
        )
        self.opt = torch.optim.SGD(self.model.parameters(), lr=self.cfg.lr, momentum=0.9)
        self.losses = []
        return self

    def run(self, x, y):
        for _epoch in range(self.cfg.epochs):
            for idx in torch.randperm(len(x)).split(self.cfg.batch_size):
                loss = nn.functional.cross_entropy(self.model(x[idx]), y[idx])
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
            self.losses.append(float(loss))

    def __exit__(self, *exc):
        print("losses", self.losses)
        return False


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(1024, 512)
    y = x[:, :10].argmax(1)
    with Trainer(Namespace(**DEFAULTS)) as t:
        t.run(x, y)
