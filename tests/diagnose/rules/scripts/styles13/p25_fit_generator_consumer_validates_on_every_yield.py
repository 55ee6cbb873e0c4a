"""`fit()` is a generator: it yields a progress record (`{"epoch", "step", "loss"}`) after each
optimizer step, and the caller decides what to do with it (log, validate, stop). A text
classifier over bag-of-words vectors with a held-out set.

Planted: the caller validates on every record it receives (`for record in fit(...): score =
evaluate(...)`), meant as "validate per epoch": the whole 4000-row validation set runs after
every training step. --fixed: the caller validates when `record["last_in_epoch"]` is true.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def fit(model, opt, x, y, epochs, batch=64):
    for epoch in range(epochs):
        order = torch.randperm(len(x)).split(batch)
        for step, idx in enumerate(order):
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            yield {
                "epoch": epoch,
                "step": step,
                "loss": loss.detach(),
                "last_in_epoch": step == len(order) - 1,
            }


def evaluate(model, x, y):
    model.eval()
    with torch.inference_mode():
        acc = (model(x).argmax(1) == y).float().mean()
    model.train()
    return acc


if __name__ == "__main__":
    torch.manual_seed(0)
    x = (torch.rand(8000, 2000) < 0.01).float()
    y = (x[:, :40].sum(1) > 0).long()
    model = nn.Sequential(nn.Linear(2000, 256), nn.ReLU(), nn.Dropout(0.2), nn.Linear(256, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for record in fit(model, opt, x[:4000], y[:4000], epochs=3):
        if FIXED and not record["last_in_epoch"]:
            continue
        score = evaluate(model, x[4000:], y[4000:])
        if record["last_in_epoch"]:
            print(record["epoch"], float(record["loss"]), float(score))
