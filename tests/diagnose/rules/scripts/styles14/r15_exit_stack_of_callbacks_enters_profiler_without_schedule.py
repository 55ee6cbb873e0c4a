"""The run's callbacks are context managers entered on one `contextlib.ExitStack` (a timer, a
metrics file, a profiler "for the performance report"), so they all close at the end of `fit`.

Planted: the profiler callback enters `torch.profiler.profile(...)` with no `schedule`: it
records every op of every training step for the whole run.
--fixed: the profiler is given `schedule(wait=1, warmup=1, active=3, repeat=1)` and stepped
every iteration, so it records five steps and then stays out of the way.
"""

import contextlib
import sys
import time

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile, schedule

FIXED = "--fixed" in sys.argv


@contextlib.contextmanager
def timer(name):
    start = time.perf_counter()
    yield
    print(name, f"{time.perf_counter() - start:.1f}s")


def profiler_callback():
    if FIXED:
        return profile(
            activities=[ProfilerActivity.CPU],
            schedule=schedule(wait=1, warmup=1, active=3, repeat=1),
        )
    return profile(activities=[ProfilerActivity.CPU], record_shapes=True)


def fit(model, opt, x, y, epochs):
    with contextlib.ExitStack() as stack:
        stack.enter_context(timer("fit"))
        prof = stack.enter_context(profiler_callback())
        for epoch in range(epochs):
            for idx in torch.randperm(len(x)).split(128):
                loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
                prof.step()
            print("epoch", epoch, float(loss))


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(8192, 64)
    y = (x[:, 0] > 0).long()
    model = nn.Sequential(
        *[m for _ in range(6) for m in (nn.Linear(64, 64), nn.ReLU())], nn.Linear(64, 2)
    )
    fit(model, torch.optim.Adam(model.parameters(), lr=1e-3), x, y, epochs=3)
