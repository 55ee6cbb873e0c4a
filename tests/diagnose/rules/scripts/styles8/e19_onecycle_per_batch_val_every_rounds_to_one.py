"""A `OneCycleLR` schedule stepped after every batch (as it must be), validation "about a hundred
times per run" with the interval computed from the loader's length, the best validation loss
kept with its step. A conv net on synthetic 1-channel 20x20 images.

Planted: the interval is `len(train_loader) // 100`, which rounds to 0 on this small loader and
is then clamped to 1 by `max(1, ...)`: validation over the whole validation set runs after every
training batch. --fixed: `VAL_EVERY = max(1, total_steps // 10)` (ten validations per run).
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

FIXED = "--fixed" in sys.argv
EPOCHS = 2

if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(6000, 1, 20, 20)
    y = (x[:, 0, :10].mean((1, 2)) > x[:, 0, 10:].mean((1, 2))).long()
    train_loader = DataLoader(TensorDataset(x[:5000], y[:5000]), batch_size=64, shuffle=True)
    val_loader = DataLoader(TensorDataset(x[5000:], y[5000:]), batch_size=250)
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(32 * 7 * 7, 2),
    )
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    total_steps = EPOCHS * len(train_loader)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=total_steps)
    VAL_EVERY = max(1, total_steps // 10) if FIXED else max(1, len(train_loader) // 100)
    best, best_step, step = float("inf"), -1, 0
    for _epoch in range(EPOCHS):
        for xb, yb in train_loader:
            model.train()
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            step += 1
            if step % VAL_EVERY == 0:
                model.eval()
                with torch.no_grad():
                    val = (
                        sum(
                            nn.functional.cross_entropy(model(a), b, reduction="sum").item()
                            for a, b in val_loader
                        )
                        / 1000
                    )
                if val < best:
                    best, best_step = val, step
    print("best", best, "at", best_step)
