"""Curriculum learning: examples are sorted by a difficulty score, and at every epoch the
`CurriculumSchedule` widens the pool of allowed examples. The author builds a fresh
`DataLoader(Subset(...), num_workers=1)` for every epoch from the new pool, so its worker
process starts again each epoch.

Planted: worker processes spawned for every epoch's new loader (their start-up in every epoch).
--fixed: one loader with persistent workers over a sampler that reads the schedule's pool.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, Sampler, Subset

FIXED = "--fixed" in sys.argv


class Shapes(Dataset):
    def __init__(self, n=3000):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 48, generator=g)
        self.y = (self.x[:, :4].sum(1) > 0).long()
        self.difficulty = self.x[:, 4:8].abs().sum(1)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i] + 0.01 * torch.randn(48), self.y[i]


class CurriculumSchedule:
    def __init__(self, dataset, epochs):
        self.order = torch.argsort(dataset.difficulty).tolist()
        self.epochs, self.epoch = epochs, 0

    def pool(self):
        fraction = 0.4 + 0.6 * self.epoch / max(1, self.epochs - 1)
        return self.order[: int(len(self.order) * fraction)]


class PoolSampler(Sampler):
    def __init__(self, schedule):
        self.schedule = schedule

    def __iter__(self):
        pool = self.schedule.pool()
        return iter([pool[i] for i in torch.randperm(len(pool)).tolist()])

    def __len__(self):
        return len(self.schedule.pool())


def main():
    torch.manual_seed(0)
    data = Shapes()
    epochs = 6
    schedule = CurriculumSchedule(data, epochs)
    model = nn.Sequential(nn.Linear(48, 64), nn.ReLU(), nn.Linear(64, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    shared = DataLoader(data, batch_size=64, sampler=PoolSampler(schedule), num_workers=1,
                        persistent_workers=True)
    for epoch in range(epochs):
        schedule.epoch = epoch
        if FIXED:
            loader = shared
        else:
            loader = DataLoader(Subset(data, schedule.pool()), batch_size=64, shuffle=True,
                                num_workers=1)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
