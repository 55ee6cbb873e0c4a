"""An `IterableDataset` streams a CSV file (generated on the spot into a temp dir, as a log
shipper would leave it): `__iter__` reads line by line, splits, converts every field with
`float()`, and yields one sample tensor at a time; the DataLoader batches them in the training
process (num_workers=0).

Planted: text parsing of every row in the training process, between steps. --fixed: the file is
parsed once with numpy.loadtxt into a tensor and batched by slicing.
"""

import os
import sys
import tempfile

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, IterableDataset

FIXED = "--fixed" in sys.argv
COLUMNS = 40


def write_csv(path, rows=12000):
    rng = np.random.default_rng(0)
    data = rng.normal(size=(rows, COLUMNS + 1)).round(4)
    data[:, -1] = (data[:, 0] + data[:, 1] > 0)
    np.savetxt(path, data, delimiter=",", fmt="%.4f")


class CsvStream(IterableDataset):
    def __init__(self, path):
        self.path = path

    def __iter__(self):
        with open(self.path) as f:
            for line in f:
                fields = [float(v) for v in line.rstrip("\n").split(",")]
                yield torch.tensor(fields[:-1]), torch.tensor(int(fields[-1]))


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(COLUMNS, 64), nn.ReLU(), nn.Linear(64, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "events.csv")
        write_csv(path)
        if FIXED:
            table = torch.from_numpy(np.loadtxt(path, delimiter=",", dtype=np.float32))
            x, y = table[:, :-1], table[:, -1].long()
            loader = list(zip(x.split(128), y.split(128)))
        else:
            loader = DataLoader(CsvStream(path), batch_size=128)
        for epoch in range(2):
            for xb, yb in loader:
                loss = nn.functional.cross_entropy(model(xb), yb)
                opt.zero_grad()
                loss.backward()
                opt.step()
            print(epoch, loss.item())


if __name__ == "__main__":
    main()
