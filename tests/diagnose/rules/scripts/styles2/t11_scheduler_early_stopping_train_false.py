"""Tabular regression with ReduceLROnPlateau, early stopping and the best model saved to disk.
The validation helper switches the model with model.train(False) and the loop never switches
it back.

Planted: after the first validation the model (Dropout, BatchNorm) trains in eval mode.
--fixed: model.train(True) at the start of every epoch.
"""

import copy
import io
import sys

import torch
from torch import nn


def make_model():
    return nn.Sequential(nn.Linear(20, 256), nn.BatchNorm1d(256), nn.ReLU(), nn.Dropout(0.3),
                         nn.Linear(256, 256), nn.BatchNorm1d(256), nn.ReLU(), nn.Dropout(0.3),
                         nn.Linear(256, 1))


def validate(model, x, y):
    model.train(False)
    with torch.inference_mode():
        return nn.functional.mse_loss(model(x).squeeze(1), y).item()


class EarlyStopping:
    def __init__(self, patience=5):
        self.best, self.bad, self.patience = float("inf"), 0, patience
        self.best_bytes = b""

    def __call__(self, val, model):
        if val < self.best:
            self.best, self.bad = val, 0
            buf = io.BytesIO()
            torch.save(copy.deepcopy(model.state_dict()), buf)
            self.best_bytes = buf.getvalue()
            return False
        self.bad += 1
        return self.bad >= self.patience


def main():
    fixed = "--fixed" in sys.argv
    torch.manual_seed(0)
    x = torch.randn(5000, 20)
    y = x @ torch.randn(20) + 0.3 * torch.randn(5000)
    xtr, ytr, xva, yva = x[:4000], y[:4000], x[4000:], y[4000:]
    model = make_model()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3, foreach=True)
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=2)
    stopper = EarlyStopping()
    model.train()
    for epoch in range(30):
        if fixed:
            model.train(True)
        for idx in torch.randperm(len(xtr)).split(64):
            loss = nn.functional.mse_loss(model(xtr[idx]).squeeze(1), ytr[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        val = validate(model, xva, yva)
        sched.step(val)
        print(f"epoch {epoch}: val mse {val:.4f}")
        if stopper(val, model):
            break


if __name__ == "__main__":
    main()
