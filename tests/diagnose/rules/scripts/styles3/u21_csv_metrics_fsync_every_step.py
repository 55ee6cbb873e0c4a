"""Metrics written to a CSV file by a small logger class that opens the file, appends one row,
flushes and fsyncs it (so a crash loses nothing), on every training step.

Planted: file I/O with an fsync inside every step. --fixed: rows buffered in memory and written
once per epoch.
"""

import csv
import os
import sys
import tempfile

import torch
from torch import nn


class CSVLogger:
    def __init__(self, path, durable):
        self.path, self.durable, self.rows = path, durable, []

    def log(self, **row):
        if not self.durable:
            self.rows.append(row)
            return
        with open(self.path, "a", newline="") as f:
            csv.DictWriter(f, fieldnames=list(row)).writerow(row)
            f.flush()
            os.fsync(f.fileno())

    def flush(self):
        if self.rows:
            with open(self.path, "a", newline="") as f:
                writer = csv.DictWriter(f, fieldnames=list(self.rows[0]))
                writer.writerows(self.rows)
            self.rows = []


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(24, 128), nn.ReLU(), nn.Linear(128, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(12800, 24)
    y = x[:, :3].sum(1, keepdim=True)
    with tempfile.TemporaryDirectory() as tmp:
        logger = CSVLogger(os.path.join(tmp, "metrics.csv"), durable="--fixed" not in sys.argv)
        for epoch in range(3):
            for step, (xb, yb) in enumerate(zip(x.split(64), y.split(64))):
                loss = nn.functional.mse_loss(model(xb), yb)
                opt.zero_grad()
                loss.backward()
                opt.step()
                logger.log(epoch=epoch, step=step, lr=opt.param_groups[0]["lr"])
            logger.flush()
            print(epoch, loss.item())


if __name__ == "__main__":
    main()
