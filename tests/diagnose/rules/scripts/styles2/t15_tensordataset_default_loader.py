"""Features already in memory as tensors, wrapped in a TensorDataset and fed through the default
DataLoader (as in most tutorials), for a wide-and-deep style MLP.

Planted: TensorDataset + DataLoader(batch_size=512): every batch is 512 per-sample index calls and
a stack. --fixed: batches sliced from shuffled tensors.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class WideDeep(nn.Module):
    def __init__(self, features=40):
        super().__init__()
        self.wide = nn.Linear(features, 1)
        self.deep = nn.Sequential(nn.Linear(features, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, x):
        return (self.wide(x) + self.deep(x)).squeeze(1)


def tensor_batches(x, y, size):
    order = torch.randperm(len(x))
    for idx in order.split(size):
        yield x[idx], y[idx]


def main():
    torch.manual_seed(0)
    x = torch.randn(40_000, 40)
    y = (x[:, 0] * x[:, 1] > 0).float()
    model = WideDeep()
    opt = torch.optim.Adagrad(model.parameters(), lr=0.05, foreach=True)
    loader = DataLoader(TensorDataset(x, y), batch_size=512, shuffle=True)
    for epoch in range(2):
        batches = tensor_batches(x, y, 512) if "--fixed" in sys.argv else loader
        for xb, yb in batches:
            loss = nn.functional.binary_cross_entropy_with_logits(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"epoch {epoch}: {loss.item():.4f}")


if __name__ == "__main__":
    main()
