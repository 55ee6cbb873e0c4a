"""Early stopping with patience: validation loss every epoch, the best state dict kept in memory
(`copy.deepcopy(model.state_dict())`), training stops when the loss has not improved for
`PATIENCE` epochs and the best weights are restored. An MLP with Dropout and BatchNorm.

Planted: the validation function wraps the forward in `torch.no_grad()` but never calls
`model.eval()`, so Dropout drops and BatchNorm normalises with the validation batch's statistics
(and updates its running statistics) while the stopping decision is made. --fixed: `model.eval()`
before and `model.train()` after.
"""

import copy
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
PATIENCE = 3


def validate(model, x, y):
    if FIXED:
        model.eval()
    with torch.no_grad():
        loss = nn.functional.cross_entropy(model(x), y).item()
    if FIXED:
        model.train()
    return loss


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(7000, 30)
    y = (x[:, :3].sum(1) > 0).long() + (x[:, 3] > 1).long()
    xt, yt, xv, yv = x[:6000], y[:6000], x[6000:], y[6000:]
    model = nn.Sequential(nn.Linear(30, 256), nn.BatchNorm1d(256), nn.ReLU(), nn.Dropout(0.3),
                          nn.Linear(256, 256), nn.BatchNorm1d(256), nn.ReLU(), nn.Dropout(0.3),
                          nn.Linear(256, 3))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    best, best_state, bad_epochs = float("inf"), None, 0
    for epoch in range(4):
        model.train()
        perm = torch.randperm(len(xt))
        for start in range(0, len(xt), 128):
            idx = perm[start : start + 128]
            loss = nn.functional.cross_entropy(model(xt[idx]), yt[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        val = validate(model, xv, yv)
        if val < best:
            best, best_state, bad_epochs = val, copy.deepcopy(model.state_dict()), 0
        else:
            bad_epochs += 1
            if bad_epochs >= PATIENCE:
                break
        print("epoch", epoch, "val", val)
    model.load_state_dict(best_state)
