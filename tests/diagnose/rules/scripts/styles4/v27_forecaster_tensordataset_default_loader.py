"""A forecaster whose sliding windows are precomputed with Tensor.unfold into two in-memory
tensors, wrapped in a TensorDataset and a default DataLoader (batch 512, shuffle): each batch is
fetched sample by sample and collated.

Planted: in-memory tensors fetched one sample at a time. --fixed: batches are drawn by indexing
the tensors with a shuffled index (torch.randperm(...).split).
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

WINDOW, HORIZON = 32, 4


def windows(series):
    w = series.unfold(0, WINDOW + HORIZON, 1)
    return w[:, :WINDOW], w[:, WINDOW:]


def batches(x, y, batch_size, fixed):
    if fixed:
        for idx in torch.randperm(len(x)).split(batch_size):
            yield x[idx], y[idx]
    else:
        yield from DataLoader(TensorDataset(x, y), batch_size=batch_size, shuffle=True)


def main():
    torch.manual_seed(0)
    t = torch.arange(40000, dtype=torch.float32)
    series = torch.sin(t / 25) + 0.3 * torch.sin(t / 7) + 0.05 * torch.randn_like(t)
    x, y = windows(series)
    model = nn.Sequential(nn.Linear(WINDOW, 128), nn.ReLU(), nn.Linear(128, HORIZON))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(2):
        for xb, yb in batches(x, y, 512, "--fixed" in sys.argv):
            loss = nn.functional.mse_loss(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
