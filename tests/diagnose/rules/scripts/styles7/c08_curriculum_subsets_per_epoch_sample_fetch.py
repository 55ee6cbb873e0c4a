"""Curriculum learning: the training set changes every epoch (`curriculum(epoch)` returns a
`Subset` of the easiest examples, growing from 30% to 100% by difficulty score); an MLP on
in-memory tensors wrapped in a TensorDataset, a new DataLoader for each epoch's subset.

Planted: each epoch's DataLoader fetches its 512-sample batches one index at a time through the
Subset and the TensorDataset and collates them. --fixed: a batch sampler hands whole index lists
to a dataset whose `__getitems__` slices the tensors once per batch.
"""

import sys

import torch
from torch import nn
from torch.utils.data import BatchSampler, DataLoader, RandomSampler, Subset, TensorDataset

FIXED = "--fixed" in sys.argv
DIM = 64


class SlicedTensors(TensorDataset):
    def __getitems__(self, indices):
        idx = torch.as_tensor(indices)
        return [tuple(t[idx] for t in self.tensors)]


def curriculum(dataset, difficulty, epoch, epochs):
    share = 0.3 + 0.7 * epoch / max(epochs - 1, 1)
    keep = difficulty.argsort()[: int(share * len(difficulty))]
    return Subset(dataset, keep.tolist())


def loader_for(subset):
    if FIXED:
        base = subset.dataset
        idx = torch.as_tensor(subset.indices)
        sliced = SlicedTensors(*(t[idx] for t in base.tensors))
        sampler = BatchSampler(RandomSampler(sliced), batch_size=512, drop_last=False)
        return DataLoader(sliced, sampler=sampler, batch_size=None, collate_fn=lambda b: b[0])
    return DataLoader(subset, batch_size=512, shuffle=True)


if __name__ == "__main__":
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(40000, DIM, generator=g)
    y = (x[:, :4].sum(1) > 0).long()
    difficulty = -x[:, :4].sum(1).abs()
    dataset = TensorDataset(x, y)
    model = nn.Sequential(nn.Linear(DIM, 128), nn.ReLU(), nn.Linear(128, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    epochs = 4
    for epoch in range(epochs):
        for xb, yb in loader_for(curriculum(dataset, difficulty, epoch, epochs)):
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"epoch {epoch}: loss {loss.item():.4f}")
