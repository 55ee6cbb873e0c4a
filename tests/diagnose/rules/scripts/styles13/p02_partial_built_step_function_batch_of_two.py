"""The training step is a plain function specialised with `functools.partial` (model, optimizer
and loss bound once), then mapped over batches by a tiny driver. A text-classifier MLP over
bag-of-words vectors.

Planted: the batch size bound into the driver is 2 (`partial(run_epoch, batch_size=2)`): every
step runs the 4096-wide layers on two rows, so the step is per-op overhead, not arithmetic.
--fixed: batch size 128.
"""

import sys
from functools import partial

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def step(model, opt, loss_fn, x, y):
    loss = loss_fn(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


def run_epoch(step_fn, x, y, batch_size):
    for idx in torch.randperm(len(x)).split(batch_size):
        loss = step_fn(x[idx], y[idx])
    return float(loss)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = (torch.rand(4096, 1000) < 0.02).float()
    y = (x[:, :50].sum(1) > 1).long()
    model = nn.Sequential(
        nn.Linear(1000, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 2)
    )
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    train_step = partial(step, model, opt, nn.functional.cross_entropy)
    epoch = partial(run_epoch, train_step, batch_size=128 if FIXED else 2)
    for e in range(3):
        print("epoch", e, epoch(x, y))
