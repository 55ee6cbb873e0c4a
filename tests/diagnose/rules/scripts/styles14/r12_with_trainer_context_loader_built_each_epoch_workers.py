"""`with Trainer(model, dataset) as trainer: trainer.fit(epochs)`: the context manager opens a
metrics file in `__enter__` and closes it in `__exit__`; `fit` asks `self.train_loader()` for the
epoch's loader. The dataset augments samples, so the loader has workers.

Planted: `train_loader()` builds a new `DataLoader(num_workers=2)` every epoch, without
`persistent_workers`: two worker processes are started (and the dataset pickled to them) at
every epoch start; epochs are short, so the start-up is a large share.
--fixed: the loader is built once in `__enter__` with `persistent_workers=True`.
"""

import os
import sys
import tempfile

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv


class Augmented(Dataset):
    def __init__(self, n=768):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 3, 32, 32, generator=g)
        self.y = torch.randint(0, 10, (n,), generator=g)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        img = self.x[i]
        if torch.rand(()) < 0.5:
            img = img.flip(2)
        return img + 0.02 * torch.randn_like(img), self.y[i]


class Trainer:
    def __init__(self, model, dataset):
        self.model, self.dataset = model, dataset
        self.opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)

    def __enter__(self):
        self.log = open(os.path.join(tempfile.gettempdir(), "r12_metrics.txt"), "w")
        if FIXED:
            self.loader = DataLoader(
                self.dataset, batch_size=64, shuffle=True, num_workers=2, persistent_workers=True
            )
        return self

    def train_loader(self):
        if FIXED:
            return self.loader
        return DataLoader(self.dataset, batch_size=64, shuffle=True, num_workers=2)

    def fit(self, epochs):
        for epoch in range(epochs):
            for x, y in self.train_loader():
                loss = nn.functional.cross_entropy(self.model(x), y)
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
            self.log.write(f"{epoch} {float(loss)}\n")

    def __exit__(self, *exc):
        self.log.close()
        return False


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 16, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(4), nn.Flatten(), nn.Linear(256, 10)
    )
    with Trainer(model, Augmented()) as trainer:
        trainer.fit(8)
