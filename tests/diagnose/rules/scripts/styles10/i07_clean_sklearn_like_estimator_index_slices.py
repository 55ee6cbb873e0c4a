"""Clean: a scikit-learn-like estimator (`fit(X, y)`, `predict(X)`, `get_params`) over NumPy
arrays that converts them to tensors once in `fit` and trains on shuffled index slices of 256
rows, with early stopping on a held-out fraction evaluated per epoch under `torch.no_grad()`.

No planted problem; `--fixed` changes nothing (kept for the bench's control run).
"""

import numpy as np
import torch
from torch import nn


class MLPClassifier:
    def __init__(self, hidden=256, max_epochs=6, batch_size=256, patience=2):
        self.hidden, self.max_epochs = hidden, max_epochs
        self.batch_size, self.patience = batch_size, patience

    def get_params(self, deep=False):
        return {"hidden": self.hidden, "max_epochs": self.max_epochs,
                "batch_size": self.batch_size, "patience": self.patience}

    def fit(self, X, y):
        X, y = torch.from_numpy(X), torch.from_numpy(y)
        split = int(0.9 * len(X))
        xt, yt, xv, yv = X[:split], y[:split], X[split:], y[split:]
        self.net_ = nn.Sequential(nn.Linear(X.shape[1], self.hidden), nn.ReLU(),
                                  nn.Linear(self.hidden, int(y.max()) + 1))
        opt = torch.optim.Adam(self.net_.parameters(), lr=1e-3)
        best, bad = float("inf"), 0
        for epoch in range(self.max_epochs):
            self.net_.train()
            perm = torch.randperm(len(xt))
            for start in range(0, len(xt), self.batch_size):
                idx = perm[start : start + self.batch_size]
                loss = nn.functional.cross_entropy(self.net_(xt[idx]), yt[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
            self.net_.eval()
            with torch.no_grad():
                val = nn.functional.cross_entropy(self.net_(xv), yv).item()
            best, bad = (val, 0) if val < best else (best, bad + 1)
            if bad >= self.patience:
                break
        return self

    def predict(self, X):
        self.net_.eval()
        with torch.no_grad():
            return self.net_(torch.from_numpy(X)).argmax(1).numpy()


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30000, 48)).astype(np.float32)
    y = (X[:, :4].sum(1) > 0).astype(np.int64)
    torch.manual_seed(0)
    clf = MLPClassifier().fit(X[:26000], y[:26000])
    print("acc", (clf.predict(X[26000:]) == y[26000:]).mean())
