"""A scikit-learn-style estimator class for tabular data written by the author:
`TabularNet(epochs=..., batch_size=...).fit(X, y)` with categorical embeddings and numeric
features, a Dataset that standardises numeric columns per row, and `predict_proba`.

Planted: `fit()` calls `self._make_loader(X, y)` at the top of every epoch, a new `DataLoader`
with two workers (not persistent), so each epoch starts two worker processes again; the epochs
are short. --fixed: the loader is built once, with `persistent_workers=True`.
"""

import sys

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv


class Rows(Dataset):
    def __init__(self, cats, nums, y, mean, std):
        self.cats, self.nums, self.y, self.mean, self.std = cats, nums, y, mean, std

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return (
            torch.from_numpy(self.cats[i]),
            torch.from_numpy((self.nums[i] - self.mean) / self.std),
            torch.tensor(self.y[i]),
        )


class TabularNet:
    def __init__(self, cardinalities, n_num, epochs=8, batch_size=256):
        self.epochs, self.batch_size = epochs, batch_size
        self.embeds = nn.ModuleList(nn.Embedding(c, 8) for c in cardinalities)
        self.mlp = nn.Sequential(
            nn.Linear(8 * len(cardinalities) + n_num, 64), nn.ReLU(), nn.Linear(64, 2)
        )
        self.params = [*self.embeds.parameters(), *self.mlp.parameters()]

    def _forward(self, cats, nums):
        return self.mlp(torch.cat([e(cats[:, j]) for j, e in enumerate(self.embeds)] + [nums], 1))

    def _make_loader(self, X, y):
        cats, nums = X
        data = Rows(cats, nums, y, self.mean_, self.std_)
        return DataLoader(
            data, batch_size=self.batch_size, shuffle=True, num_workers=2, persistent_workers=FIXED
        )

    def fit(self, X, y):
        self.mean_, self.std_ = X[1].mean(0), X[1].std(0) + 1e-6
        opt = torch.optim.Adam(self.params, lr=2e-3)
        loader = self._make_loader(X, y) if FIXED else None
        for epoch in range(self.epochs):
            if not FIXED:
                loader = self._make_loader(X, y)
            for cats, nums, target in loader:
                loss = nn.functional.cross_entropy(self._forward(cats, nums), target)
                opt.zero_grad()
                loss.backward()
                opt.step()
            print("epoch", epoch, loss.item())
        return self

    def predict_proba(self, X):
        with torch.no_grad():
            return (
                self._forward(
                    torch.from_numpy(X[0]), torch.from_numpy((X[1] - self.mean_) / self.std_)
                )
                .softmax(1)
                .numpy()
            )


if __name__ == "__main__":
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    n = 3000
    cats = np.stack([rng.integers(0, c, n) for c in (5, 12, 30)], 1)
    nums = rng.normal(size=(n, 6)).astype(np.float32)
    y = ((nums[:, 0] + (cats[:, 1] % 3)) > 1).astype(np.int64)
    model = TabularNet([5, 12, 30], 6).fit((cats, nums), y)
    print(model.predict_proba((cats[:5], nums[:5])))
