"""A noisy-label classifier with per-sample loss reweighting (a "small-loss trick"): the helper
computes each sample's weight in a Python loop over the batch, reading every per-sample loss as a
float and comparing it with a running threshold.

Planted: a Python loop over the samples of every batch in the training step. --fixed: the weights
come from one tensor comparison.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def sample_weights(per_sample, threshold):
    if FIXED:
        return (per_sample.detach() < threshold).float() + 0.1
    weights = []
    for value in per_sample.detach():
        weights.append(1.1 if float(value) < threshold else 0.1)
    return torch.tensor(weights)


def main():
    torch.manual_seed(0)
    x = torch.randn(16384, 64)
    y = (x[:, 0] > 0).long()
    flip = torch.rand(len(y)) < 0.2
    y[flip] = 1 - y[flip]
    model = nn.Sequential(nn.Linear(64, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    threshold = 1.0
    for epoch in range(2):
        for xb, yb in zip(x.split(256), y.split(256)):
            per_sample = nn.functional.cross_entropy(model(xb), yb, reduction="none")
            w = sample_weights(per_sample, threshold)
            loss = (w * per_sample).sum() / w.sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            threshold = 0.99 * threshold + 0.01 * per_sample.detach().median()
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
