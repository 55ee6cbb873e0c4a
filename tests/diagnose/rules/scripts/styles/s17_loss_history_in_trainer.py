"""A Trainer class keeps every step's loss tensor (with its graph) in self.history.

Planted: self.history.append(loss): each step's autograd graph stays alive. --fixed: loss.detach().
"""

import sys

import torch
from torch import nn


class Trainer:
    def __init__(self, net, detach):
        self.net = net
        self.opt = torch.optim.SGD(net.parameters(), lr=0.01)
        self.history = []
        self.detach = detach

    def step(self, xb, yb):
        out = self.net(xb)
        loss = nn.functional.mse_loss(out, yb)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.history.append(loss.detach() if self.detach else loss)

    def fit(self, epochs, batches):
        for _ in range(epochs):
            for xb, yb in batches:
                self.step(xb, yb)
        return torch.stack(self.history).mean()


def main():
    torch.manual_seed(0)
    x = torch.randn(8192, 256)
    y = torch.randn(8192, 256)
    net = nn.Sequential(nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 256))
    Trainer(net, detach="--fixed" in sys.argv).fit(3, list(zip(x.split(256), y.split(256))))


if __name__ == "__main__":
    main()
