"""A trainer assembled from three mixins: `DataMixin` (the loader), `OptimMixin` (optimizer and
scheduler), `LoopMixin` (the epoch loop), combined in `class Trainer(DataMixin, OptimMixin,
LoopMixin)`. A dataset with real per-sample work (noise, mixing, normalisation), two workers.

Planted: `DataMixin.train_loader` is a property that builds a new `DataLoader(num_workers=2)`
each time it is read, and `LoopMixin` reads it at every epoch: the workers are started again
every epoch (10 short epochs). --fixed: the property caches the loader (built once,
persistent workers).
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv


class Noisy(Dataset):
    def __init__(self, n=640):
        g = torch.Generator().manual_seed(0)
        self.x, self.y = torch.randn(n, 128, generator=g), torch.randint(0, 4, (n,), generator=g)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        v = self.x[i] + 0.1 * torch.randn(128)
        v = (v - v.mean()) / (v.std() + 1e-6)
        return v, self.y[i]


class DataMixin:
    @property
    def train_loader(self):
        if FIXED and getattr(self, "_loader", None) is not None:
            return self._loader
        self._loader = DataLoader(
            self.dataset, batch_size=64, shuffle=True, num_workers=2, persistent_workers=FIXED
        )
        return self._loader


class OptimMixin:
    def configure_optimizers(self):
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-3)
        self.sched = torch.optim.lr_scheduler.StepLR(self.opt, 5, 0.5)


class LoopMixin:
    def fit(self, epochs):
        self.configure_optimizers()
        for epoch in range(epochs):
            for x, y in self.train_loader:
                loss = nn.functional.cross_entropy(self.model(x), y)
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
            self.sched.step()
            print("epoch", epoch, float(loss))


class Trainer(DataMixin, OptimMixin, LoopMixin):
    def __init__(self, model, dataset):
        self.model, self.dataset = model, dataset


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 4))
    Trainer(model, Noisy()).fit(10)
