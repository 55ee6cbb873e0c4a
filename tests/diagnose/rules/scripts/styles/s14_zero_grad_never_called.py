"""Closure-style step (LBFGS-like signature) that never clears the gradients.

Planted: no zero_grad() anywhere: gradients of every step add up. --fixed: zero_grad in the
closure.
"""

import sys

import torch
from torch import nn


def make_closure(net, opt, xb, yb, clear):
    def closure():
        if clear:
            opt.zero_grad()
        loss = nn.functional.mse_loss(net(xb), yb)
        loss.backward()
        return loss
    return closure


def main():
    clear = "--fixed" in sys.argv
    torch.manual_seed(0)
    x = torch.randn(2048, 20)
    y = x[:, :1] * 2 - x[:, 1:2]
    net = nn.Sequential(nn.Linear(20, 128), nn.Tanh(), nn.Linear(128, 1))
    opt = torch.optim.SGD(net.parameters(), lr=1e-3)
    for epoch in range(4):
        for xb, yb in zip(x.split(64), y.split(64)):
            opt.step(make_closure(net, opt, xb, yb, clear))


if __name__ == "__main__":
    main()
