"""A RealNVP-style normalizing flow on 2-D two-moons-like data: affine coupling layers with
alternating masks. A `Monitor` object tracks the held-out negative log-likelihood; the training
loop calls `monitor.maybe_update(step)` after each step, and its `every` came from the config as
1 (the author meant epochs).

Planted: the held-out NLL (4096 points through the whole flow) computed after every step.
--fixed: every 200 steps.
"""

import math
import sys

import torch
from torch import nn

EVERY = 200 if "--fixed" in sys.argv else 1


class Coupling(nn.Module):
    def __init__(self, mask):
        super().__init__()
        self.register_buffer("mask", mask)
        self.net = nn.Sequential(nn.Linear(2, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                                 nn.Linear(64, 4))

    def forward(self, x):
        s, t = self.net(x * self.mask).chunk(2, dim=-1)
        s = torch.tanh(s) * (1 - self.mask)
        y = x * self.mask + (1 - self.mask) * (x * s.exp() + t)
        return y, s.sum(-1)


class Flow(nn.Module):
    def __init__(self, layers=6):
        super().__init__()
        masks = [torch.tensor([1.0, 0.0]), torch.tensor([0.0, 1.0])]
        self.layers = nn.ModuleList(Coupling(masks[i % 2]) for i in range(layers))

    def log_prob(self, x):
        logdet = torch.zeros(x.shape[0])
        for layer in self.layers:
            x, ld = layer(x)
            logdet = logdet + ld
        return -0.5 * (x ** 2).sum(-1) - math.log(2 * math.pi) + logdet


def moons(n, g=None):
    t = torch.rand(n, generator=g) * math.pi
    upper = torch.rand(n, generator=g) < 0.5
    x = torch.stack([torch.cos(t), torch.sin(t)], -1)
    x[~upper] = torch.stack([1 - torch.cos(t[~upper]), 0.5 - torch.sin(t[~upper])], -1)
    return x + 0.05 * torch.randn(n, 2, generator=g)


class Monitor:
    def __init__(self, flow, held_out, every):
        self.flow, self.held_out, self.every, self.best = flow, held_out, every, float("inf")

    @torch.no_grad()
    def maybe_update(self, step):
        if step % self.every == 0:
            nll = -self.flow.log_prob(self.held_out).mean()
            self.best = min(self.best, float(nll))


def main():
    torch.manual_seed(0)
    flow = Flow()
    opt = torch.optim.Adam(flow.parameters(), lr=1e-3)
    monitor = Monitor(flow, moons(4096, torch.Generator().manual_seed(1)), EVERY)
    for step in range(1, 401):
        loss = -flow.log_prob(moons(256)).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        monitor.maybe_update(step)
    print("best held-out nll", monitor.best)


if __name__ == "__main__":
    main()
