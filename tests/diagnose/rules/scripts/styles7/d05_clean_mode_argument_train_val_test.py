"""CLEAN: one `run(model, batches, mode)` function for train/val/test: the module mode and the
grad mode both follow `mode == "train"`, only training steps; a tabular MLP with dropout and
BatchNorm validated per epoch. Nothing is planted (`--fixed` changes nothing).
"""

import torch
from torch import nn


def run(model, batches, mode, opt=None):
    training = mode == "train"
    model.train(training)
    total, n = 0.0, 0
    with torch.set_grad_enabled(training):
        for x, y in batches:
            loss = nn.functional.cross_entropy(model(x), y)
            if training:
                opt.zero_grad()
                loss.backward()
                opt.step()
            total, n = total + loss.detach(), n + 1
    return float(total) / n


def split(n, g):
    x = torch.randn(n, 30, generator=g)
    y = (x[:, :3].sum(1) > 0).long()
    return list(zip(x.split(128), y.split(128)))


if __name__ == "__main__":
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    train, val, test = split(20000, g), split(4000, g), split(4000, g)
    model = nn.Sequential(nn.Linear(30, 256), nn.BatchNorm1d(256), nn.ReLU(), nn.Dropout(0.2),
                          nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(3):
        print(epoch, run(model, train, "train", opt), run(model, val, "val"))
    print("test", run(model, test, "test"))
