"""Early stopping with patience, implemented in an `EarlyStopping` object whose `should_stop()`
evaluates the validation loss itself; the training loop asks it after every optimizer step (the
author's patience is counted in steps).

Planted: the whole validation set runs after every training step. --fixed: the loop asks once
per epoch and the patience counts epochs.
"""

import sys

import torch
from torch import nn


class EarlyStopping:
    def __init__(self, model, val_x, val_y, patience):
        self.model, self.val_x, self.val_y = model, val_x, val_y
        self.patience, self.best, self.bad = patience, float("inf"), 0

    @torch.no_grad()
    def should_stop(self):
        self.model.eval()
        loss = sum(nn.functional.mse_loss(self.model(xb), yb, reduction="sum")
                   for xb, yb in zip(self.val_x.split(512), self.val_y.split(512)))
        self.model.train()
        loss = float(loss) / len(self.val_x)
        if loss < self.best - 1e-4:
            self.best, self.bad = loss, 0
        else:
            self.bad += 1
        return self.bad >= self.patience


def main():
    torch.manual_seed(0)
    per_epoch = "--fixed" in sys.argv
    w = torch.randn(32, 1)
    x = torch.randn(8192, 32)
    y = x @ w + 0.1 * torch.randn(8192, 1)
    vx = torch.randn(4096, 32)
    vy = vx @ w
    model = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                          nn.Linear(256, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    stopper = EarlyStopping(model, vx, vy, patience=5 if per_epoch else 300)
    stop = False
    for epoch in range(6):
        for xb, yb in zip(x.split(64), y.split(64)):
            loss = nn.functional.mse_loss(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if not per_epoch and stopper.should_stop():
                stop = True
                break
        if stop or (per_epoch and stopper.should_stop()):
            break
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
