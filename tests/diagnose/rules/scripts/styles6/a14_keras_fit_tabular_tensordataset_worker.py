"""A Keras-like `Sequential` subclass with `compile()`/`fit(x, y, validation_split=...)` that
builds its own DataLoader from NumPy arrays, for tabular regression (house-price-like features
standardized with NumPy), early stopping on validation loss.

Planted: `fit` wraps the arrays in a TensorDataset and hands them to a DataLoader with
`num_workers=2` ("workers make loading faster"): each batch of rows already in memory is
pickled between processes. --fixed: num_workers=0.
"""

import sys

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

WORKERS = 0 if "--fixed" in sys.argv else 2


class Sequential(nn.Sequential):
    def compile(self, optimizer="adam", loss="mse", lr=1e-3):
        self.opt = {"adam": torch.optim.Adam, "sgd": torch.optim.SGD}[optimizer](
            self.parameters(), lr=lr)
        self.loss_fn = {"mse": nn.functional.mse_loss, "mae": nn.functional.l1_loss}[loss]

    def fit(self, x, y, epochs=10, batch_size=32, validation_split=0.1, patience=3):
        n_val = int(len(x) * validation_split)
        xt, yt = torch.from_numpy(x[n_val:]), torch.from_numpy(y[n_val:])
        xv, yv = torch.from_numpy(x[:n_val]), torch.from_numpy(y[:n_val])
        loader = DataLoader(TensorDataset(xt, yt), batch_size=batch_size, shuffle=True,
                            num_workers=WORKERS, persistent_workers=WORKERS > 0)
        best, bad, history = float("inf"), 0, []
        for epoch in range(epochs):
            self.train()
            for xb, yb in loader:
                loss = self.loss_fn(self(xb), yb)
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
            self.eval()
            with torch.inference_mode():
                val = float(self.loss_fn(self(xv), yv))
            history.append(val)
            print(f"epoch {epoch + 1}: val_loss={val:.4f}")
            if val < best - 1e-4:
                best, bad = val, 0
            else:
                bad += 1
                if bad >= patience:
                    break
        return history


def main():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(20000, 24)).astype(np.float32)
    w = rng.normal(size=(24, 1)).astype(np.float32)
    y = (x @ w + 0.1 * rng.normal(size=(20000, 1))).astype(np.float32)
    x = (x - x.mean(0)) / x.std(0)
    torch.manual_seed(0)
    model = Sequential(nn.Linear(24, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU(),
                       nn.Linear(32, 1))
    model.compile("adam", "mse")
    model.fit(x, y, epochs=3, batch_size=64)


if __name__ == "__main__":
    main()
