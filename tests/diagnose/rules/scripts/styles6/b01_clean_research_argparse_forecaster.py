"""CLEAN: a research repo's train.py (argparse, a `utils` block, a dataclass of metrics), an
LSTM forecaster on sliding windows of a multivariate series, batches sliced from in-memory
tensors, validation once per epoch under inference_mode in eval mode, the loss read every 200
steps. Nothing is planted (`--fixed` changes nothing).
"""

import argparse
from dataclasses import dataclass, field

import torch
from torch import nn


# ---- utils --------------------------------------------------------------------------------
@dataclass
class History:
    train: list = field(default_factory=list)
    val: list = field(default_factory=list)


def windows(series, history, horizon):
    starts = torch.arange(len(series) - history - horizon)
    idx = starts[:, None] + torch.arange(history + horizon)
    w = series[idx]
    return w[:, :history], w[:, history:, 0]


class Forecaster(nn.Module):
    def __init__(self, channels, hidden, horizon):
        super().__init__()
        self.lstm = nn.LSTM(channels, hidden, batch_first=True)
        self.drop = nn.Dropout(0.1)
        self.head = nn.Linear(hidden, horizon)

    def forward(self, x):
        return self.head(self.drop(self.lstm(x)[0][:, -1]))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--history", type=int, default=48)
    p.add_argument("--horizon", type=int, default=8)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--fixed", action="store_true")
    args = p.parse_args()
    torch.manual_seed(0)
    t = torch.arange(12000.0)
    series = torch.stack([torch.sin(t / 24), torch.cos(t / 168), 0.1 * torch.randn(12000)], 1)
    x, y = windows(series, args.history, args.horizon)
    split = int(0.9 * len(x))
    model = Forecaster(3, 64, args.horizon)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3)
    hist, step = History(), 0
    for epoch in range(args.epochs):
        model.train()
        for idx in torch.randperm(split).split(args.batch_size):
            loss = nn.functional.mse_loss(model(x[idx]), y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if step % 200 == 0:
                hist.train.append(loss.item())
            step += 1
        model.eval()
        with torch.inference_mode():
            hist.val.append(float(nn.functional.mse_loss(model(x[split:]), y[split:])))
        print(epoch, hist.train[-1], hist.val[-1])


if __name__ == "__main__":
    main()
