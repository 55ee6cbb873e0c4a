"""Stochastic weight averaging with `torch.optim.swa_utils`: a normal phase, then an SWA phase
with `SWALR` where the averaged model is updated after each step; `update_bn` at the end and a
test accuracy for the plain and the averaged model. A BatchNorm MLP classifier.

Planted: in the SWA phase the author builds `AveragedModel(model)` inside the loop ("take the
average now") and keeps it in the same variable, so every step deep-copies the whole model.
--fixed: the `AveragedModel` is built once before the SWA phase and `update_parameters(model)`
runs each step.
"""

import sys

import torch
from torch import nn
from torch.optim.swa_utils import SWALR, AveragedModel, update_bn

FIXED = "--fixed" in sys.argv

if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(16384, 40)
    y = (x[:, :20].sum(1) > x[:, 20:].sum(1)).long()
    x_test, y_test = x[:2048], y[:2048]
    x, y = x[2048:], y[2048:]
    model = nn.Sequential(
        nn.Linear(40, 512),
        nn.BatchNorm1d(512),
        nn.ReLU(),
        nn.Linear(512, 512),
        nn.BatchNorm1d(512),
        nn.ReLU(),
        nn.Linear(512, 2),
    )
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    swa_sched = SWALR(opt, swa_lr=0.01)
    swa_model = AveragedModel(model) if FIXED else None
    batches = [(x[i : i + 128], y[i : i + 128]) for i in range(0, len(x), 128)]
    for epoch in range(3):
        swa_phase = epoch >= 1
        for xb, yb in batches:
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if swa_phase:
                if FIXED:
                    swa_model.update_parameters(model)
                else:
                    averaged = swa_model
                    swa_model = AveragedModel(model)
                    if averaged is not None:
                        swa_model.load_state_dict(averaged.state_dict())
                    swa_model.update_parameters(model)
        if swa_phase:
            swa_sched.step()
        print("epoch", epoch, loss.item())
    update_bn(((xb,) for xb, _ in batches), swa_model)
    swa_model.eval()
    model.eval()
    with torch.no_grad():
        print("plain", (model(x_test).argmax(1) == y_test).float().mean().item())
        print("swa", (swa_model(x_test).argmax(1) == y_test).float().mean().item())
