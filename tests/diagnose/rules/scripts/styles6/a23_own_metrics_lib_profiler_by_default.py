"""A script with its own small "perf + metrics" library at the top: `Meter` for running means,
`Perf` that times sections and, when `profile=True` (the default, "it is cheap"), keeps a
`torch.profiler.profile` open around the run so a table can be printed at the end. The model
is a temporal convolutional network forecasting a univariate series from 128-step windows.

Planted: `Perf(profile=True)` by default: torch.profiler records every op of every step for
the whole run. --fixed: `Perf(profile=False)`.
"""

import sys
import time
from contextlib import contextmanager

import torch
from torch import nn


class Meter:
    def __init__(self):
        self.total, self.n = 0.0, 0

    def add(self, v, n=1):
        self.total += v * n
        self.n += n

    @property
    def mean(self):
        return self.total / max(self.n, 1)


class Perf:
    def __init__(self, profile=True):
        self.times = {}
        self.prof = torch.profiler.profile(record_shapes=True) if profile else None

    def __enter__(self):
        if self.prof is not None:
            self.prof.__enter__()
        return self

    def __exit__(self, *exc):
        if self.prof is not None:
            self.prof.__exit__(*exc)
            print(self.prof.key_averages().table(row_limit=5))

    @contextmanager
    def section(self, name):
        t = time.perf_counter()
        yield
        self.times[name] = self.times.get(name, 0.0) + time.perf_counter() - t


class TCN(nn.Module):
    def __init__(self, ch=32, levels=4):
        super().__init__()
        layers, c_in = [], 1
        for i in range(levels):
            layers += [nn.Conv1d(c_in, ch, 3, padding=2 ** i, dilation=2 ** i), nn.ReLU()]
            c_in = ch
        self.net = nn.Sequential(*layers)
        self.out = nn.Linear(ch, 1)

    def forward(self, x):
        return self.out(self.net(x)[:, :, -1])


def main():
    torch.manual_seed(0)
    t = torch.arange(30000.0)
    series = torch.sin(t / 50) + 0.5 * torch.sin(t / 7) + 0.1 * torch.randn(30000)
    idx = torch.arange(0, 29800, 3)
    windows = series[idx[:, None] + torch.arange(128)][:, None]
    target = series[idx + 128][:, None]
    model = TCN()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    meter = Meter()
    with Perf(profile="--fixed" not in sys.argv) as perf:
        for epoch in range(2):
            for b in torch.randperm(len(windows)).split(64):
                with perf.section("step"):
                    loss = nn.functional.mse_loss(model(windows[b]), target[b])
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                meter.add(loss.detach())
            print(epoch, float(meter.mean), perf.times)


if __name__ == "__main__":
    main()
