"""A learning-rate range test (LR finder) followed by training at the chosen rate: the finder
raises the LR exponentially each step, keeps an exponentially smoothed loss and stops when the
loss diverges. A small residual MLP on generated regression data.

Planted: the smoothing and the divergence test use Python math on the loss tensor
(`math.isfinite(loss)`, `smoothed = beta * smoothed + (1 - beta) * float(loss)` and
`if loss > 4 * best`): each step reads the loss on the host, in the finder and in the training
phase that shares the helper. --fixed: the loss is kept as a tensor (`torch.lerp`) and read only
every 50 steps.
"""

import math
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class Smoother:
    def __init__(self, beta=0.98):
        self.beta, self.value, self.best, self.n = beta, None, None, 0

    def update(self, loss):
        self.n += 1
        if FIXED:
            d = loss.detach()
            self.value = d if self.value is None else torch.lerp(d, self.value, self.beta)
            return self.n % 50 != 0 or bool(self.value < 1e6)
        if not math.isfinite(loss):
            return False
        v = float(loss)
        self.value = v if self.value is None else self.beta * self.value + (1 - self.beta) * v
        self.best = v if self.best is None else min(self.best, v)
        return not loss > 4 * self.best + 1.0


def batches(x, y, n):
    for _ in range(n):
        idx = torch.randint(0, len(x), (128,))
        yield x[idx], y[idx]


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(10000, 30)
    y = torch.sin(x[:, :3]).sum(1, keepdim=True)
    model = nn.Sequential(nn.Linear(30, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                          nn.Linear(256, 1))
    state = {k: v.clone() for k, v in model.state_dict().items()}
    opt = torch.optim.SGD(model.parameters(), lr=1e-5, momentum=0.9)
    smoother, lrs = Smoother(), []
    for i, (xb, yb) in enumerate(batches(x, y, 150)):
        lr = 1e-5 * (10 ** (i / 30))
        for g in opt.param_groups:
            g["lr"] = lr
        loss = nn.functional.mse_loss(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        lrs.append(lr)
        if not smoother.update(loss):
            break
    model.load_state_dict(state)
    opt = torch.optim.SGD(model.parameters(), lr=lrs[len(lrs) // 2], momentum=0.9)
    smoother = Smoother()
    for step, (xb, yb) in enumerate(batches(x, y, 600)):
        loss = nn.functional.mse_loss(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        smoother.update(loss)
        if step % 200 == 0:
            print(step, smoother.value)
