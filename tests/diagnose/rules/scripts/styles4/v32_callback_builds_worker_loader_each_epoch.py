"""A trainer with an `on_epoch_start` callback that re-shuffles a bucketed sampler by building a
fresh DataLoader (a worker process, no persistent_workers) for the new epoch; the loop then
iterates `trainer.loader`.

Planted: DataLoader workers are started anew every epoch. --fixed: the loader is built once with
persistent_workers=True and a shuffling sampler.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv


class Noisy(Dataset):
    def __init__(self, n=768):
        g = torch.Generator().manual_seed(0)
        self.x, self.y = torch.randn(n, 32, generator=g), torch.randint(0, 3, (n,), generator=g)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i] * (1 + 0.05 * torch.randn(1)), self.y[i]


class ReshuffleCallback:
    def on_epoch_start(self, trainer, epoch):
        if FIXED and trainer.loader is not None:
            return
        trainer.loader = DataLoader(trainer.dataset, batch_size=96, shuffle=True, num_workers=1,
                                    persistent_workers=FIXED)


class Trainer:
    def __init__(self, model, dataset, callbacks):
        self.model, self.dataset, self.callbacks, self.loader = model, dataset, callbacks, None
        self.opt = torch.optim.SGD(model.parameters(), lr=0.05)

    def fit(self, epochs):
        for epoch in range(epochs):
            for cb in self.callbacks:
                cb.on_epoch_start(self, epoch)
            for x, y in self.loader:
                loss = nn.functional.cross_entropy(self.model(x), y)
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
            print(epoch, loss.item())


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 3))
    Trainer(model, Noisy(), [ReshuffleCallback()]).fit(epochs=15)
