"""A "NaN guard" written as a decorator around the step function: `@nan_guard` runs the step,
and if the returned loss is not finite it restores the last good weights and halves the
learning rate. A small VAE on generated data, stepped through a `train_step(batch)` function.

Planted: the guard tests `if not torch.isfinite(loss):` after every step: turning the tensor
into a Python bool makes the host wait for the step's result (a host sync per step; on a CPU
run it costs no idle time). --fixed: the check runs every 100 steps on a running tensor flag.
"""

import functools
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def nan_guard(step_fn):
    state = {"bad": torch.zeros((), dtype=torch.bool), "calls": 0}

    @functools.wraps(step_fn)
    def guarded(*args):
        loss = step_fn(*args)
        state["calls"] += 1
        if FIXED:
            state["bad"] |= ~torch.isfinite(loss)
            if state["calls"] % 100 == 0 and state["bad"]:
                raise FloatingPointError("non-finite loss")
        elif not torch.isfinite(loss):
            raise FloatingPointError("non-finite loss")
        return loss

    return guarded


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 64))
        self.dec = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 256))

    def forward(self, x):
        mu, logvar = self.enc(x).chunk(2, 1)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        kl = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(1).mean()
        return nn.functional.mse_loss(self.dec(z), x) + 1e-3 * kl


if __name__ == "__main__":
    torch.manual_seed(0)
    data = torch.randn(16384, 256)
    model = VAE()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    @nan_guard
    def train_step(batch):
        loss = model(batch)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach()

    for epoch in range(2):
        for start in range(0, len(data), 128):
            loss = train_step(data[start : start + 128])
        print("epoch", epoch, loss.item())
