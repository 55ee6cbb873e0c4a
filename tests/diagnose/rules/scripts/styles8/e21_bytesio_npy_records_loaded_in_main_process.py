"""A Dataset over an in-memory "archive": each record is an `.npy` file's bytes (written once with
`np.save` into `io.BytesIO` and kept as `bytes`, as if read from a tar or LMDB), decoded with
`np.load` on every access, normalised and turned into a tensor; a 1-D conv regressor on the
decoded series.

Planted: the `DataLoader` decodes every record in the training process (`num_workers=0`), and
decoding plus normalising 256 records per batch costs about as much as the step. --fixed: two
persistent workers.
"""

import io
import sys

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv


class NpyRecords(Dataset):
    def __init__(self, n=8192, length=96, seed=0):
        rng = np.random.default_rng(seed)
        self.records = []
        for _ in range(n):
            series = rng.normal(size=(4, length)).cumsum(1).astype(np.float32)
            buf = io.BytesIO()
            np.save(buf, series)
            self.records.append(buf.getvalue())

    def __len__(self):
        return len(self.records)

    def __getitem__(self, i):
        series = np.load(io.BytesIO(self.records[i]))
        series = (series - series.mean(1, keepdims=True)) / (series.std(1, keepdims=True) + 1e-6)
        target = np.float32(series[0, -8:].mean())
        return torch.from_numpy(series[:, :-8].copy()), torch.tensor([target])


if __name__ == "__main__":
    torch.manual_seed(0)
    workers = 2 if FIXED else 0
    loader = DataLoader(
        NpyRecords(),
        batch_size=256,
        shuffle=True,
        num_workers=workers,
        persistent_workers=workers > 0,
    )
    model = nn.Sequential(
        nn.Conv1d(4, 32, 5, padding=2),
        nn.ReLU(),
        nn.Conv1d(32, 32, 5, padding=2),
        nn.ReLU(),
        nn.AdaptiveAvgPool1d(1),
        nn.Flatten(),
        nn.Linear(32, 1),
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(3):
        for xb, yb in loader:
            loss = nn.functional.mse_loss(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, loss.item())
