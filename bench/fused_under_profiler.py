"""What `fused=True` gains on a profiled training loop: multi_profiler_sgd_zero_fill's loop (SGD
with momentum on a 256-wide MLP, batches of 16, zero_grad(set_to_none=False)) run as it is and
with `fused=True`, each run a fresh process (as `--try` runs), in pairs whose order alternates,
with the torch.profiler the script keeps on and without it. Prints each pair's speedup in the
training loop's CPU time (the first 20 steps left out) and their median.

    OMP_NUM_THREADS=1 .venv/bin/python bench/fused_under_profiler.py [--pairs 5] [--steps 192]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

WARMUP_STEPS = 20
LOOP = r"""
import contextlib, sys, time
import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile

torch.set_num_threads(1)
fused, profiled, steps = sys.argv[1] == "1", sys.argv[2] == "1", int(sys.argv[3])
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                      nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
flags = {"fused": True} if fused else {}
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, **flags)
x, y = torch.randn(16 * steps, 256), torch.randint(0, 10, (16 * steps,))
recording = profile(activities=[ProfilerActivity.CPU]) if profiled else contextlib.nullcontext()
with recording:
    for step in range(steps):
        if step == int(sys.argv[4]):
            started = time.process_time()
        batch = slice(16 * step, 16 * step + 16)
        loss = nn.functional.cross_entropy(model(x[batch]), y[batch])
        optimizer.zero_grad(set_to_none=False)
        loss.backward()
        optimizer.step()
    print(time.process_time() - started)
"""


def loop_cpu_s(fused: bool, profiled: bool, steps: int) -> float:
    """CPU seconds of the loop's steps after WARMUP_STEPS, in a fresh process."""
    argv = [str(int(fused)), str(int(profiled)), str(steps), str(WARMUP_STEPS)]
    done = subprocess.run(
        [sys.executable, "-c", LOOP, *argv], capture_output=True, text=True, check=True
    )
    return float(done.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--steps", type=int, default=192)
    options = parser.parse_args()
    for profiled in (True, False):
        speedups = []
        for pair in range(options.pairs):
            order = (False, True) if pair % 2 == 0 else (True, False)
            seconds = {fused: loop_cpu_s(fused, profiled, options.steps) for fused in order}
            speedups.append(seconds[False] / seconds[True])
        print(
            f"profiler {'on ' if profiled else 'off'}: fused=True CPU speedup per pair "
            f"{' '.join(f'{s:.3f}' for s in speedups)}; median {statistics.median(speedups):.3f}"
        )


if __name__ == "__main__":
    main()
