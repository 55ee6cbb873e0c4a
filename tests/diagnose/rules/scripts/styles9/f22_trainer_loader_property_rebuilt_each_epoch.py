"""A Lightning-like module that owns its data: `train_loader` is a `@property` returning a
`DataLoader` over the module's dataset with two workers, and the author's `fit` loop iterates
`for batch in module.train_loader` every epoch. The dataset normalises each sample's spectrum-
like vector on access. A 1-D conv classifier.

Planted: the property builds a new `DataLoader` on every access (no `persistent_workers`), so
each epoch starts two worker processes anew and waits for their first batches.
--fixed: the loader is built once (`functools.cached_property`) with `persistent_workers=True`.
"""

import functools
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv


class Spectra(Dataset):
    def __init__(self, n=1536):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 1, 256, generator=g).cumsum(-1)
        self.y = (self.x[:, 0, -1] > 0).long()

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        v = self.x[i]
        return (v - v.mean()) / (v.std() + 1e-6), self.y[i]


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.dataset = Spectra()
        self.net = nn.Sequential(nn.Conv1d(1, 8, 9, stride=4), nn.ReLU(), nn.Flatten(),
                                 nn.Linear(8 * 62, 2))

    def forward(self, x):
        return self.net(x)

    def _loader(self):
        return DataLoader(self.dataset, batch_size=256, shuffle=True, num_workers=2,
                          persistent_workers=FIXED)

    if FIXED:
        train_loader = functools.cached_property(_loader)
    else:
        train_loader = property(_loader)


def fit(module, epochs):
    opt = torch.optim.Adam(module.parameters(), lr=1e-3)
    for epoch in range(epochs):
        for xb, yb in module.train_loader:
            loss = nn.functional.cross_entropy(module(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, loss.item())


if __name__ == "__main__":
    torch.manual_seed(0)
    fit(Classifier(), epochs=8)
