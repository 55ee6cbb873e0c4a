"""Time-series forecasting: a long multivariate series cut into overlapping windows (input 48
steps, horizon 12) with `unfold`, stored as a `TensorDataset` of windows; an MLP-mixer-like
forecaster; MAE on a held-out tail per epoch.

Planted: the loader of the in-memory windows uses three persistent workers (`num_workers=3`),
so each batch is sliced in a worker and passed back through shared memory, which costs more
than slicing it in the training process. --fixed: `num_workers=0`.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

FIXED = "--fixed" in sys.argv
LOOKBACK, HORIZON, VARS = 48, 12, 4


class Mixer(nn.Module):
    def __init__(self):
        super().__init__()
        self.time = nn.Sequential(nn.Linear(LOOKBACK, 64), nn.GELU(), nn.Linear(64, LOOKBACK))
        self.chan = nn.Sequential(nn.Linear(VARS, 16), nn.GELU(), nn.Linear(16, VARS))
        self.out = nn.Linear(LOOKBACK, HORIZON)

    def forward(self, x):
        x = x + self.time(x.transpose(1, 2)).transpose(1, 2)
        x = x + self.chan(x)
        return self.out(x.transpose(1, 2)).transpose(1, 2)


if __name__ == "__main__":
    torch.manual_seed(0)
    t = torch.arange(60000.0)
    series = torch.stack([torch.sin(t / p) for p in (7, 24, 60, 168)], 1) + 0.1 * torch.randn(
        60000, VARS
    )
    windows = series.unfold(0, LOOKBACK + HORIZON, 1).transpose(1, 2)
    train, test = windows[:50000], windows[50000:]
    workers = 0 if FIXED else 3
    loader = DataLoader(
        TensorDataset(train[:, :LOOKBACK].contiguous(), train[:, LOOKBACK:].contiguous()),
        batch_size=128,
        shuffle=True,
        num_workers=workers,
        persistent_workers=workers > 0,
    )
    model = Mixer()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(2):
        for xb, yb in loader:
            loss = nn.functional.l1_loss(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            mae = nn.functional.l1_loss(model(test[:, :LOOKBACK]), test[:, LOOKBACK:]).item()
        print("epoch", epoch, "test mae", mae)
