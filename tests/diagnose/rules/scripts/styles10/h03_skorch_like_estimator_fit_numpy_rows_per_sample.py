"""A skorch-like scikit-learn estimator written by the author: `NeuralNetClassifier(module,
max_epochs, batch_size).fit(X, y)` / `.predict_proba(X)` on NumPy arrays, with `get_params`,
and an internal `_iterator` that builds the DataLoader. A tabular classifier on generated data.

Planted: the estimator wraps X and y in a `Dataset` whose `__getitem__` returns one row
(`torch.from_numpy(X[i])`) and the DataLoader fetches and collates 512 single rows per batch in
the training process. --fixed: a `BatchSampler` hands whole index batches to `__getitem__`,
which slices 512 rows at once (`batch_size=None`).
"""

import sys

import numpy as np
import torch
from torch import nn
from torch.utils.data import BatchSampler, DataLoader, Dataset, RandomSampler

FIXED = "--fixed" in sys.argv


class ArrayDataset(Dataset):
    def __init__(self, X, y):
        self.X, self.y = X, y

    def __len__(self):
        return len(self.X)

    def __getitem__(self, i):
        return torch.from_numpy(self.X[i]), torch.as_tensor(self.y[i])


class NeuralNetClassifier:
    def __init__(self, module, max_epochs=3, batch_size=512, lr=1e-3):
        self.module, self.max_epochs, self.batch_size, self.lr = module, max_epochs, batch_size, lr

    def get_params(self, deep=False):
        return {"max_epochs": self.max_epochs, "batch_size": self.batch_size, "lr": self.lr}

    def _iterator(self, dataset):
        if FIXED:
            sampler = BatchSampler(RandomSampler(dataset), self.batch_size, drop_last=False)
            return DataLoader(dataset, sampler=sampler, batch_size=None)
        return DataLoader(dataset, batch_size=self.batch_size, shuffle=True)

    def fit(self, X, y):
        self.module_ = self.module()
        opt = torch.optim.Adam(self.module_.parameters(), lr=self.lr)
        for epoch in range(self.max_epochs):
            for xb, yb in self._iterator(ArrayDataset(X, y)):
                loss = nn.functional.cross_entropy(self.module_(xb), yb)
                opt.zero_grad()
                loss.backward()
                opt.step()
            print("epoch", epoch, "loss", loss.item())
        return self

    def predict_proba(self, X):
        self.module_.eval()
        with torch.no_grad():
            return self.module_(torch.from_numpy(X)).softmax(1).numpy()


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40000, 32)).astype(np.float32)
    y = (X[:, :4].sum(1) > 0).astype(np.int64)
    torch.manual_seed(0)
    clf = NeuralNetClassifier(lambda: nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 2)))
    clf.fit(X[:36000], y[:36000])
    print("acc", (clf.predict_proba(X[36000:]).argmax(1) == y[36000:]).mean())
