"""Curriculum learning written as a recursive function: `train_stage(stage)` trains on the data
with the stage's noise level, then calls `train_stage(stage + 1)` until the last stage. The
features are in memory (a `TensorDataset`), read through one loader built before the recursion.

Planted: the loader reads the in-memory `TensorDataset` through two persistent workers
(`num_workers=2`): each batch of slices is pickled and handed over through a queue, which costs
more than the batch itself.
--fixed: no loader: each batch is one indexing of the tensors (`x[idx]`).
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

FIXED = "--fixed" in sys.argv
STAGES = [1.0, 0.5, 0.25, 0.0]


class Batches:
    def __init__(self, x, y, size):
        self.x, self.y, self.size = x, y, size

    def __iter__(self):
        for idx in torch.randperm(len(self.x)).split(self.size):
            yield self.x[idx], self.y[idx]


def train_stage(stage, model, opt, loader, epochs_per_stage=2):
    noise = STAGES[stage]
    for epoch in range(epochs_per_stage):
        for x, y in loader:
            x = x + noise * torch.randn_like(x)
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("stage", stage, "epoch", epoch, float(loss))
    if stage + 1 < len(STAGES):
        train_stage(stage + 1, model, opt, loader, epochs_per_stage)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(8192, 256)
    y = (x[:, :4].sum(1) > 0).long()
    if FIXED:
        loader = Batches(x, y, 256)
    else:
        loader = DataLoader(
            TensorDataset(x, y),
            batch_size=256,
            shuffle=True,
            num_workers=2,
            persistent_workers=True,
        )
    model = nn.Sequential(nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    train_stage(0, model, opt, loader)
