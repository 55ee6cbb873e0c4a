"""Functional style with closures: `make_dataset(arrays)` returns a Dataset whose `__getitem__`
is a closure over the in-memory arrays, `make_loss(pos_weight)` a loss closure, and the model
is built by `build_mlp(sizes)`; a multi-label tagger over 300 dense features, 40 labels.

Planted: the rows live in memory as tensors, but they reach the model one sample at a time
through `__getitem__` and the default collate (DataLoader, batch_size=256): 256 Python calls
and a stack per batch. --fixed: batches sliced from the tensors by index.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv


def make_dataset(x, y):
    class Rows(Dataset):
        def __len__(self):
            return len(x)

        def __getitem__(self, i):
            return x[i], y[i]

    return Rows()


def make_loss(pos_weight):
    def loss_fn(logits, target):
        return nn.functional.binary_cross_entropy_with_logits(logits, target,
                                                              pos_weight=pos_weight)

    return loss_fn


def build_mlp(sizes):
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers[:-1])


def sliced(x, y, batch):
    def batches():
        for idx in torch.randperm(len(x)).split(batch):
            yield x[idx], y[idx]

    return batches


def main():
    torch.manual_seed(0)
    x = torch.randn(30000, 300)
    y = (x[:, :40] + 0.5 * torch.randn(30000, 40) > 1.0).float()
    pos_weight = (1 - y.mean(0)) / y.mean(0).clamp(min=1e-3)
    loss_fn = make_loss(pos_weight)
    model = build_mlp([300, 256, 40])
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    batches = sliced(x, y, 256) if FIXED else (
        lambda: DataLoader(make_dataset(x, y), batch_size=256, shuffle=True))
    for epoch in range(2):
        for xb, yb in batches():
            loss = loss_fn(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
