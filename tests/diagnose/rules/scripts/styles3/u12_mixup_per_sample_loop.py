"""Mixup written sample by sample: for each example of the batch a Beta-distributed weight is
drawn and the example is blended with a random partner in a Python loop of tiny tensor ops.

Planted: a per-sample Python loop of tiny ops in the step. --fixed: one vectorized blend.
"""

import sys

import torch
from torch import nn
from torch.nn import functional as F

FIXED = "--fixed" in sys.argv
BETA = torch.distributions.Beta(torch.tensor(0.4), torch.tensor(0.4))


def mixup(x, y_onehot):
    perm = torch.randperm(len(x))
    if FIXED:
        lam = BETA.sample((len(x), 1))
        return lam * x + (1 - lam) * x[perm], lam * y_onehot + (1 - lam) * y_onehot[perm]
    xs, ys = [], []
    for i in range(len(x)):
        lam = BETA.sample()
        xs.append(lam * x[i] + (1 - lam) * x[perm[i]])
        ys.append(lam * y_onehot[i] + (1 - lam) * y_onehot[perm[i]])
    return torch.stack(xs), torch.stack(ys)


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(50, 256), nn.ReLU(), nn.Linear(256, 8))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x, y = torch.randn(6400, 50), torch.randint(0, 8, (6400,))
    for epoch in range(3):
        for xb, yb in zip(x.split(64), y.split(64)):
            xm, ym = mixup(xb, F.one_hot(yb, 8).float())
            loss = torch.sum(-ym * F.log_softmax(model(xm), 1), 1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
