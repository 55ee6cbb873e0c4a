"""A research repo's train.py: argparse flags, a block of helpers copied from `utils.py`
(seeding, a sliding-window builder, a `log_step` pretty-printer), and a GRU forecaster on a
synthetic multivariate series cut into sliding windows.

Planted: `log_step` prints the step's predictions (a tensor) with the loss on every step, as
the author did while debugging. --fixed: `--log-every 200`.
"""

import argparse
import math
import random

import numpy as np
import torch
from torch import nn


# ---- utils.py -------------------------------------------------------------------------------
def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def make_windows(series, history, horizon):
    starts = torch.arange(0, len(series) - history - horizon)
    idx = starts[:, None] + torch.arange(history + horizon)[None, :]
    windows = series[idx]  # (n, history + horizon, channels)
    return windows[:, :history], windows[:, history:, 0]


def log_step(step, loss, pred):
    print(f"[step {step:05d}] mse={loss:.4f} forecast={pred}")


# ---- model ----------------------------------------------------------------------------------
class Forecaster(nn.Module):
    def __init__(self, channels, hidden, horizon):
        super().__init__()
        self.rnn = nn.GRU(channels, hidden, batch_first=True)
        self.head = nn.Linear(hidden, horizon)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.head(out[:, -1])


def parse_args():
    p = argparse.ArgumentParser(description="sliding-window forecaster")
    p.add_argument("--history", type=int, default=24)
    p.add_argument("--horizon", type=int, default=6)
    p.add_argument("--hidden", type=int, default=32)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--log-every", type=int, default=1)
    p.add_argument("--fixed", action="store_true")
    return p.parse_args()


def main():
    args = parse_args()
    if args.fixed:
        args.log_every = 200
    seed_everything(0)
    t = torch.arange(6000, dtype=torch.float32)
    series = torch.stack([torch.sin(t / 24), torch.cos(t / 168), torch.randn(6000) * 0.1], 1)
    x, y = make_windows(series, args.history, args.horizon)
    model = Forecaster(3, args.hidden, args.horizon)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    step = 0
    for epoch in range(args.epochs):
        for idx in torch.randperm(len(x)).split(args.batch_size):
            pred = model(x[idx])
            loss = nn.functional.mse_loss(pred, y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step % args.log_every == 0:
                log_step(step, loss, pred)
            step += 1
        print(f"epoch {epoch} rmse {math.sqrt(loss.item()):.3f}")


if __name__ == "__main__":
    main()
