"""Early stopping with patience: an `EarlyStopping` object tracks the best validation loss and a
counter; training stops when the counter reaches `patience`. Validation runs every
`eval_interval` optimizer steps; a 1-D CNN regressor on sensor windows.

Planted: `eval_interval` is counted in optimizer steps and left at 1 (the author thought it meant
epochs), so the whole validation set (a third the size of the training set) is run after every
training batch. --fixed: eval_interval is one epoch's number of steps.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class EarlyStopping:
    def __init__(self, patience):
        self.patience, self.best, self.bad = patience, float("inf"), 0

    def update(self, value):
        if value < self.best - 1e-4:
            self.best, self.bad = value, 0
        else:
            self.bad += 1
        return self.bad >= self.patience


def windows(n, g):
    x = torch.randn(n, 6, 64, generator=g).cumsum(2) * 0.1
    return x, x[:, 0, -8:].mean(1, keepdim=True)


@torch.no_grad()
def validate(model, vx, vy):
    model.eval()
    loss = sum(nn.functional.mse_loss(model(a), b, reduction="sum") for a, b in
               zip(vx.split(256), vy.split(256)))
    model.train()
    return float(loss) / len(vx)


if __name__ == "__main__":
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    tx, ty = windows(6000, g)
    vx, vy = windows(2000, g)
    model = nn.Sequential(
        nn.Conv1d(6, 32, 5, padding=2), nn.ReLU(), nn.Conv1d(32, 32, 5, padding=2), nn.ReLU(),
        nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(32, 1),
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    steps_per_epoch = len(tx) // 64
    eval_interval = steps_per_epoch if FIXED else 1
    stopper, step = EarlyStopping(patience=50 if not FIXED else 3), 0
    for epoch in range(6):
        for idx in torch.randperm(len(tx), generator=g).split(64):
            loss = nn.functional.mse_loss(model(tx[idx]), ty[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            if step % eval_interval == 0 and stopper.update(validate(model, vx, vy)):
                print("early stop at step", step)
                sys.exit(0)
        print("epoch", epoch, "best", stopper.best)
