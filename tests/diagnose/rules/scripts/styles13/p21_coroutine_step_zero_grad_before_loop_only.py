"""The optimizer's side of training as a coroutine: `stepper = optimizer_coroutine(opt)` is
primed once, then each step `stepper.send(loss)` runs backward and the update. A small
autoencoder on generated data.

Planted: `opt.zero_grad()` sits before the coroutine's `while True` (written once, "at start"),
so it runs only when the coroutine is primed: every later step adds its gradients to all the
previous ones. --fixed: `zero_grad()` inside the loop, before each backward.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def optimizer_coroutine(opt):
    opt.zero_grad()
    while True:
        loss = yield
        if FIXED:
            opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 16), nn.Tanh(), nn.Linear(16, 64))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    stepper = optimizer_coroutine(opt)
    next(stepper)
    x = torch.randn(4096, 64)
    for epoch in range(3):
        for idx in torch.randperm(len(x)).split(64):
            loss = nn.functional.mse_loss(model(x[idx]), x[idx])
            stepper.send(loss)
        print("epoch", epoch, float(loss))
