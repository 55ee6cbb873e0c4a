"""k-fold cross-validation of a tabular regressor with a `Trainer`-less loop per fold; the best
model of each fold is written to disk (`fold{k}.pt`) so the folds can be ensembled later.

Planted: the "best so far" check compares the *training batch* loss, so the fold's state dict is
saved with `torch.save` after nearly every batch while the loss falls. --fixed: the check
compares the fold's validation loss once per epoch.
"""

import os
import sys
import tempfile

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
K = 3


def model_for_fold():
    return nn.Sequential(nn.Linear(24, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                         nn.Linear(512, 1))


if __name__ == "__main__":
    torch.manual_seed(0)
    out_dir = tempfile.mkdtemp()
    x = torch.randn(6000, 24)
    y = (x[:, :6] ** 2).sum(1, keepdim=True)
    folds = torch.randperm(len(x)).chunk(K)
    for k in range(K):
        val = folds[k]
        train = torch.cat([f for j, f in enumerate(folds) if j != k])
        model = model_for_fold()
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        best = float("inf")
        for epoch in range(3):
            for idx in train[torch.randperm(len(train))].split(64):
                loss = nn.functional.mse_loss(model(x[idx]), y[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
                if not FIXED and loss.item() < best:
                    best = loss.item()
                    torch.save(model.state_dict(), os.path.join(out_dir, f"fold{k}.pt"))
            if FIXED:
                with torch.no_grad():
                    val_loss = nn.functional.mse_loss(model(x[val]), y[val]).item()
                if val_loss < best:
                    best = val_loss
                    torch.save(model.state_dict(), os.path.join(out_dir, f"fold{k}.pt"))
        print("fold", k, "best", best)
