"""A time-series forecaster over a long generated sensor log: each sample is a window of the
log, and the dataset adds pandas-style engineered features (rolling means, rolling standard
deviations, exponentially weighted means) before returning it. Default DataLoader, GRU model.

Planted: the engineered features are recomputed with NumPy in `__getitem__` for every window,
with a Python loop over the rolling spans, in the training process (no workers), every epoch.
--fixed: the features are computed once over the whole log in `__init__` and `__getitem__`
slices them.
"""

import sys

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv
SPANS = (3, 5, 9, 17, 33, 65)


def features(series):
    cols = [series]
    for span in SPANS:
        kernel = np.ones(span) / span
        mean = np.convolve(series, kernel, mode="same")
        sq = np.convolve(series**2, kernel, mode="same")
        cols += [mean, np.sqrt(np.maximum(sq - mean**2, 0))]
        ewm = np.empty_like(series)
        alpha, acc = 2 / (span + 1), series[0]
        for t, v in enumerate(series):
            acc = alpha * v + (1 - alpha) * acc
            ewm[t] = acc
        cols.append(ewm)
    return np.stack(cols, 1).astype(np.float32)


class Windows(Dataset):
    def __init__(self, series, window=160):
        self.series, self.window = series, window
        self.table = features(series) if FIXED else None

    def __len__(self):
        return len(self.series) - self.window - 1

    def __getitem__(self, i):
        if FIXED:
            x = self.table[i : i + self.window]
        else:
            x = features(self.series[i : i + self.window])
        return torch.from_numpy(x), torch.tensor(
            [self.series[i + self.window]], dtype=torch.float32
        )


class Forecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(1 + 3 * len(SPANS), 24, batch_first=True)
        self.head = nn.Linear(24, 1)

    def forward(self, x):
        return self.head(self.rnn(x)[0][:, -1])


if __name__ == "__main__":
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    t = np.arange(6000)
    series = np.sin(t / 40) + 0.3 * np.sin(t / 7) + 0.2 * rng.standard_normal(len(t))
    loader = DataLoader(Windows(series), batch_size=64, shuffle=True)
    model = Forecaster()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(2):
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
