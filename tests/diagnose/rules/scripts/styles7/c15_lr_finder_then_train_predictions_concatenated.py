"""A learning-rate finder before training: `find_lr()` runs 60 steps with an exponentially
growing learning rate on a copy of the weights, picks the rate at the steepest loss drop and
restores the weights; then the real training loop runs with that rate. An MLP classifier.

Planted: the training loop keeps every batch's predictions for an end-of-run confusion matrix
with `all_preds = torch.cat([all_preds, preds])`, so each step copies everything kept so far and
steps get slower as the run goes on. --fixed: predictions go into a list, concatenated once.
"""

import copy
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
DIM, CLASSES = 32, 10


def find_lr(model, batches, lo=1e-5, hi=1.0, steps=60):
    saved = copy.deepcopy(model.state_dict())
    opt = torch.optim.SGD(model.parameters(), lr=lo)
    factor, lrs, losses = (hi / lo) ** (1 / steps), [], []
    for step, (x, y) in enumerate(batches):
        if step == steps:
            break
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        lrs.append(opt.param_groups[0]["lr"])
        losses.append(loss.item())
        for group in opt.param_groups:
            group["lr"] *= factor
    model.load_state_dict(saved)
    drops = [losses[i + 1] - losses[i] for i in range(len(losses) - 1)]
    return lrs[min(range(len(drops)), key=drops.__getitem__)]


def batches_of(x, y, size, g):
    while True:
        for idx in torch.randperm(len(x), generator=g).split(size):
            yield x[idx], y[idx]


if __name__ == "__main__":
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(30000, DIM, generator=g)
    y = (x @ torch.randn(DIM, CLASSES, generator=g)).argmax(1)
    model = nn.Sequential(nn.Linear(DIM, 64), nn.ReLU(), nn.Linear(64, CLASSES))
    stream = batches_of(x, y, 256, g)
    lr = find_lr(model, stream)
    print("lr", lr)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    all_preds, kept = torch.empty(0, dtype=torch.long), []
    all_labels = torch.empty(0, dtype=torch.long)
    for step in range(3000):
        xb, yb = next(stream)
        logits = model(xb)
        loss = nn.functional.cross_entropy(logits, yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        preds = logits.argmax(1)
        if FIXED:
            kept.append((preds, yb))
        else:
            all_preds = torch.cat([all_preds, preds])
            all_labels = torch.cat([all_labels, yb])
    if FIXED:
        all_preds = torch.cat([p for p, _ in kept])
        all_labels = torch.cat([t for _, t in kept])
    confusion = torch.bincount(all_labels * CLASSES + all_preds, minlength=CLASSES**2)
    print(confusion.view(CLASSES, CLASSES).diag().sum().item() / len(all_preds))
