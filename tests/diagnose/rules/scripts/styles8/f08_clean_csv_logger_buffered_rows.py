"""Clean: a `CSVLogger` class that buffers metric rows (detached tensors) and writes them with
`csv.writer` every 200 steps and at the end; an MLP regressor with a step learning-rate
schedule per epoch."""

import csv
import os
import tempfile

import torch
from torch import nn


class CSVLogger:
    def __init__(self, path, every=200):
        self.path, self.every, self.rows = path, every, []
        with open(path, "w", newline="") as f:
            csv.writer(f).writerow(["step", "loss", "lr"])

    def log(self, step, loss, lr):
        self.rows.append((step, loss.detach(), lr))
        if len(self.rows) >= self.every:
            self.flush()

    def flush(self):
        with open(self.path, "a", newline="") as f:
            csv.writer(f).writerows((s, f"{float(value):.5f}", lr) for s, value, lr in self.rows)
        self.rows.clear()


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(30000, 16)
    y = torch.sin(x[:, :1] * 3) + x[:, 1:2] ** 2
    model = nn.Sequential(
        nn.Linear(16, 128), nn.SiLU(), nn.Linear(128, 128), nn.SiLU(), nn.Linear(128, 1)
    )
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    sched = torch.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)
    logger = CSVLogger(os.path.join(tempfile.mkdtemp(), "log.csv"))
    step = 0
    for _epoch in range(3):
        for idx in torch.randperm(len(x)).split(128):
            loss = nn.functional.mse_loss(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            logger.log(step, loss, sched.get_last_lr()[0])
        sched.step()
    logger.flush()
    print("done", step)
