"""Best-model tracking by copy.deepcopy(model) whenever the batch loss improves (nearly every step).

Planted: best = copy.deepcopy(net) inside the step. --fixed: best weights kept by an in-place copy
into a model allocated once.
"""

import copy
import sys

import torch
from torch import nn


def main():
    inplace = "--fixed" in sys.argv
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(32, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                        nn.Linear(1024, 1))
    opt = torch.optim.SGD(net.parameters(), lr=1e-3)
    best_loss, best = float("inf"), copy.deepcopy(net)
    x = torch.randn(4096, 32)
    y = x.sum(1, keepdim=True)
    for _ in range(3):
        for xb, yb in zip(x.split(64), y.split(64)):
            loss = nn.functional.mse_loss(net(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            value = float(loss)
            if value < best_loss * 1.5:
                best_loss = min(best_loss, value)
                if inplace:
                    with torch.no_grad():
                        for b, p in zip(best.parameters(), net.parameters()):
                            b.copy_(p)
                else:
                    best = copy.deepcopy(net)


if __name__ == "__main__":
    main()
