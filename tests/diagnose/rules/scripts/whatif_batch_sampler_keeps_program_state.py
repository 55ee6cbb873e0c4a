"""A DataLoader built with its own batch_sampler (batches of uneven sizes, shuffled by the
sampler's own generator) over a dataset whose per-sample work makes the data wait a large share
of the step: the workers what-if must time it on the sampler's batches without advancing the
program's sampler. `train(steps)` returns the losses, to run under torchdoctor.watch() and then
on after it."""

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, Sampler


class Features(Dataset):
    def __init__(self, n=240):
        self.x = np.random.default_rng(0).standard_normal((n, 32)).astype(np.float32)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        sample = self.x[i]
        for _ in range(60):  # per-sample work: the data wait is most of the step
            sample = np.tanh(sample) + 0.01 * sample
        return torch.from_numpy(sample), int(self.x[i, 0] > 0)


class UnevenBatches(Sampler):
    """Batches of 12 and 20 samples in turn, in an order drawn from the sampler's own generator
    at every epoch."""

    def __init__(self, size, seed=0):
        self.size = size
        self.generator = torch.Generator().manual_seed(seed)

    def __iter__(self):
        order = torch.randperm(self.size, generator=self.generator).tolist()
        start, index = 0, 0
        while start < self.size:
            step = 12 if index % 2 == 0 else 20
            yield order[start : start + step]
            start, index = start + step, index + 1

    def __len__(self):
        return (self.size + 15) // 16


def build():
    torch.manual_seed(0)
    dataset = Features()
    loader = DataLoader(dataset, batch_sampler=UnevenBatches(len(dataset)))
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    return loader, model, optimizer


def train(loader, model, optimizer, steps):
    criterion = nn.CrossEntropyLoss()
    losses = []
    stream = iter(loader)
    for _ in range(steps):
        try:
            x, y = next(stream)
        except StopIteration:
            stream = iter(loader)
            x, y = next(stream)
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


if __name__ == "__main__":
    train(*build(), 30)
