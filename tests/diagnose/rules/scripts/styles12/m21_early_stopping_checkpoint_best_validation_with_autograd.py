"""Early stopping with checkpoint-best: after every epoch the model is scored on a large
validation split, the best state dict is kept in memory, and training stops after three epochs
without improvement. A two-layer MLP on generated data; the validation split is as large as the
training split (a "hold out half" protocol).

Planted: `validate()` runs the model without `torch.no_grad()` (and without eval mode worries:
the model has no Dropout/BatchNorm), so every validation forward records an autograd graph
that is thrown away. --fixed: `validate()` runs under `torch.no_grad()`.
"""

import contextlib
import copy
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def validate(model, batches):
    total, count = 0.0, 0
    with torch.no_grad() if FIXED else contextlib.nullcontext():
        for x, y in batches:
            total += float(nn.functional.cross_entropy(model(x), y, reduction="sum"))
            count += len(y)
    return total / count


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(16000, 128)
    y = (x[:, :6].sum(1) > 0).long()
    train_x, train_y, val_x, val_y = x[:8000], y[:8000], x[8000:], y[8000:]
    val = list(zip(val_x.split(256), val_y.split(256)))
    model = nn.Sequential(
        nn.Linear(128, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 2)
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    best, best_state, patience = float("inf"), None, 0
    for epoch in range(8):
        for idx in torch.randperm(len(train_x)).split(256):
            loss = nn.functional.cross_entropy(model(train_x[idx]), train_y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        score = validate(model, val)
        print("epoch", epoch, score)
        if score < best:
            best, best_state, patience = score, copy.deepcopy(model.state_dict()), 0
        else:
            patience += 1
            if patience == 3:
                break
    model.load_state_dict(best_state)
