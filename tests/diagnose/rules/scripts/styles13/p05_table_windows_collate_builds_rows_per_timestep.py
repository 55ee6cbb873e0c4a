"""Time-series forecasting from a pandas-like table held as a dict of NumPy columns (one column
per sensor, a `"time"` column). The dataset returns the start row of a window; the `collate_fn`
cuts the windows out of the table and stacks them, the way a DataFrame `.iloc` helper would.

Planted: the collate builds each window row by row and column by column in Python
(`[[table[c][t] for c in cols] for t in range(start, start + window)]`), then one
`torch.tensor` of the nested lists: per batch 64 x 48 x 8 Python reads. Loader in the main
process. --fixed: the table is stacked once into one array and the collate slices it
(`np.stack([arr[s : s + window] for s in starts])`).
"""

import sys

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader

FIXED = "--fixed" in sys.argv
WINDOW = 48
rng = np.random.default_rng(0)
TABLE = {"time": np.arange(20000)}
COLS = [f"sensor_{k}" for k in range(8)]
for k, name in enumerate(COLS):
    TABLE[name] = np.sin(TABLE["time"] / (20 + 7 * k)) + 0.1 * rng.standard_normal(20000)
ARRAY = np.stack([TABLE[c] for c in COLS], 1).astype(np.float32)


def collate(starts):
    if FIXED:
        x = torch.from_numpy(np.stack([ARRAY[s : s + WINDOW] for s in starts]))
        y = torch.from_numpy(ARRAY[[s + WINDOW for s in starts], 0:1])
    else:
        x = torch.tensor(
            [[[TABLE[c][t] for c in COLS] for t in range(s, s + WINDOW)] for s in starts],
            dtype=torch.float32,
        )
        y = torch.tensor([[TABLE[COLS[0]][s + WINDOW]] for s in starts], dtype=torch.float32)
    return x, y


class Forecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Flatten(), nn.Linear(WINDOW * 8, 128), nn.ReLU(), nn.Linear(128, 1)
        )

    def forward(self, x):
        return self.net(x)


if __name__ == "__main__":
    torch.manual_seed(0)
    loader = DataLoader(
        range(len(ARRAY) - WINDOW - 1), batch_size=64, shuffle=True, collate_fn=collate
    )
    model = Forecaster()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(2):
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
