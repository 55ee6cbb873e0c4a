"""Stochastic weight averaging as a fine-tuning phase (the model stands for a pre-trained one):
`AveragedModel` averages the weights each epoch and `SWALR` holds the learning rate; `update_bn` recomputes BatchNorm statistics.
The per-epoch check of the averaged model runs under no_grad, but the averaged model is left in
train mode (the helper only calls eval() on the base model).

Planted: the averaged model is evaluated with Dropout active and BatchNorm in batch-statistics
mode. --fixed: the helper calls eval() on the model it evaluates.
"""

import sys

import torch
from torch import nn
from torch.optim.swa_utils import SWALR, AveragedModel, update_bn

FIXED = "--fixed" in sys.argv


def net():
    return nn.Sequential(nn.Linear(40, 128), nn.BatchNorm1d(128), nn.ReLU(), nn.Dropout(0.3),
                         nn.Linear(128, 128), nn.BatchNorm1d(128), nn.ReLU(), nn.Dropout(0.3),
                         nn.Linear(128, 3))


def check(base, model, x, y):
    base.eval()
    if FIXED:
        model.eval()
    with torch.no_grad():
        acc = sum((model(x[i:i + 256]).argmax(1) == y[i:i + 256]).sum() for i in
                  range(0, len(x), 256)) / len(x)
    base.train()
    model.train()
    return acc


def main():
    torch.manual_seed(0)
    x, y = torch.randn(1024, 40), torch.randint(0, 3, (1024,))
    xv, yv = torch.randn(4096, 40), torch.randint(0, 3, (4096,))
    model = net()
    swa = AveragedModel(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    swa_sched = SWALR(opt, swa_lr=0.02)
    batches = list(zip(x.split(128), y.split(128)))
    for epoch in range(8):
        for xb, yb in batches:
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        swa.update_parameters(model)
        swa_sched.step()
        update_bn(batches, swa)
        print(epoch, float(check(model, swa, xv, yv)))


if __name__ == "__main__":
    main()
