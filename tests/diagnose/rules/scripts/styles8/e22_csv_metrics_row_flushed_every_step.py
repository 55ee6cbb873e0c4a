"""Metrics logged to a CSV file with `csv.DictWriter`: step, epoch, loss, accuracy, learning
rate, gradient norm and wall time per row, the file flushed so that a notebook can plot it
while the run goes on. A two-layer GRU on synthetic sequences.

Planted: a row is written and the file flushed (with `os.fsync`) after every step. --fixed: rows
are buffered and written every 100 steps.
"""

import csv
import os
import sys
import tempfile
import time

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class SeqModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(8, 32, num_layers=2, batch_first=True)
        self.head = nn.Linear(32, 3)

    def forward(self, x):
        return self.head(self.gru(x)[0][:, -1])


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(8000, 20, 8)
    y = (x.sum((1, 2)) > 0).long() + (x[:, -1, 0] > 1).long()
    model = SeqModel()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    path = os.path.join(tempfile.mkdtemp(), "metrics.csv")
    fields = ["step", "epoch", "loss", "acc", "lr", "grad_norm", "time"]
    pending, step, t0 = [], 0, time.time()
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        for epoch in range(2):
            for idx in torch.randperm(len(x)).split(32):
                logits = model(x[idx])
                loss = nn.functional.cross_entropy(logits, y[idx])
                opt.zero_grad()
                loss.backward()
                grad_norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
                step += 1
                pending.append(
                    {
                        "step": step,
                        "epoch": epoch,
                        "loss": f"{loss.item():.5f}",
                        "acc": f"{(logits.argmax(1) == y[idx]).float().mean().item():.4f}",
                        "lr": opt.param_groups[0]["lr"],
                        "grad_norm": f"{grad_norm.item():.4f}",
                        "time": f"{time.time() - t0:.3f}",
                    }
                )
                if not FIXED or len(pending) == 100:
                    writer.writerows(pending)
                    pending.clear()
                    f.flush()
                    os.fsync(f.fileno())
    print(open(path).read().count("\n"), "rows")
