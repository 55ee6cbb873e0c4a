"""A time-series forecaster over sliding windows of a long multivariate series: the Dataset's
__getitem__ cuts the window and z-normalizes it, written with a nested Python loop over time
steps and channels (with running sums), as one would in plain Python.

Planted: expensive per-sample Python work in __getitem__, run by the DataLoader in the training
process (the training process loads the data: D101). --fixed: every window is cut and
normalized once, with Tensor.unfold, and batches are drawn by indexing those tensors.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

WINDOW, HORIZON, CHANNELS = 48, 8, 6


class SlidingWindows(Dataset):
    def __init__(self, series):
        self.series = series

    def __len__(self):
        return len(self.series) - WINDOW - HORIZON

    def __getitem__(self, i):
        target = self.series[i + WINDOW : i + WINDOW + HORIZON, 0]
        rows = self.series[i : i + WINDOW].tolist()
        out = []
        means, stds = [], []
        for c in range(CHANNELS):
            col = [rows[t][c] for t in range(WINDOW)]
            m = sum(col) / WINDOW
            s = (sum((v - m) ** 2 for v in col) / (WINDOW - 1)) ** 0.5 + 1e-6
            means.append(m)
            stds.append(s)
        for t in range(WINDOW):
            out.append([(rows[t][c] - means[c]) / stds[c] for c in range(CHANNELS)])
        return torch.tensor(out), (target - means[0]) / stds[0]


class Forecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(CHANNELS, 64, batch_first=True)
        self.head = nn.Linear(64, HORIZON)

    def forward(self, x):
        _, h = self.gru(x)
        return self.head(h[-1])


def all_windows(series):
    w = series.unfold(0, WINDOW + HORIZON, 1).transpose(1, 2)  # (n, time, channel)
    x, target = w[:, :WINDOW], w[:, WINDOW:, 0]
    mean, std = x.mean(1, keepdim=True), x.std(1, keepdim=True) + 1e-6
    return (x - mean) / std, (target - mean[:, :, 0]) / std[:, :, 0]


def batches(series, fixed):
    if not fixed:
        yield from DataLoader(SlidingWindows(series), batch_size=64, shuffle=True)
        return
    x, y = all_windows(series)
    for idx in torch.randperm(len(x)).split(64):
        yield x[idx], y[idx]


def main():
    torch.manual_seed(0)
    t = torch.arange(6000, dtype=torch.float32)
    series = torch.stack([torch.sin(t / (10 + 3 * c)) for c in range(CHANNELS)], 1)
    series += 0.1 * torch.randn_like(series)
    model = Forecaster()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(2):
        for x, y in batches(series, "--fixed" in sys.argv):
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
