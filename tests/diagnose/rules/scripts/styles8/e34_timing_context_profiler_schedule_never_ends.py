"""A training script with the author's `Timer` helpers and a `--profile` option: the loop runs
inside `torch.profiler.profile(schedule=..., on_trace_ready=...)` and calls `prof.step()` after
each batch, as in the PyTorch tutorial; a trace handler writes a table of the top operators.

Planted: the profile option defaults to on and the schedule is `schedule(wait=1, warmup=1,
active=10000)`, so the profiler records every op of the whole run. --fixed: profiling off
(a `nullcontext` with a no-op `step()`).
"""

import contextlib
import sys

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile, schedule

FIXED = "--fixed" in sys.argv
PROFILE = not FIXED


class NoProfiler(contextlib.nullcontext):
    def step(self):
        pass


def trace_handler(prof):
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=5))


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(16000, 30)
    y = (x[:, :5].sum(1) > 0).long()
    model = nn.Sequential(
        nn.Linear(30, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 2)
    )
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    profiler = (
        profile(
            activities=[ProfilerActivity.CPU],
            schedule=schedule(wait=1, warmup=1, active=10000),
            on_trace_ready=trace_handler,
        )
        if PROFILE
        else NoProfiler()
    )
    with profiler as prof:
        for epoch in range(2):
            for idx in torch.randperm(len(x)).split(64):
                loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
                prof.step()
            print("epoch", epoch, loss.item())
