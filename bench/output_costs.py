"""Per-step costs added by the output work, measured side by side (interleaved repeats).

    OMP_NUM_THREADS=1 .venv/bin/python bench/output_costs.py --repeats 15

1. diagnose: the memory read at each step end (a pread of `/proc/self/statm` on CPU) and the
   phase seconds and spans kept for --trace (`_phase_seconds` at each step close, `_spans` made of
   the same intervals after the run), as a share of a 1.4 ms step (the shortest step in
   bench/diagnose_overhead.py).
2. Trainer: the NaN guard reading its flags every step (the old behaviour, CHECK_EVERY=0) vs 16
   steps at a time, on a small CPU training step: the ratio of whole-step times. On CPU the
   read is no device sync, so this bounds the host-side cost only; on a GPU each read waits for
   the queue.
Prints medians and the ratio of each pair measured in the same round.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch import nn

from torchdoctor.diagnose.probes.memory_reading import MemoryReader
from torchdoctor.diagnose.steps import _phase_seconds, _spans
from torchdoctor.trainer import faults

STEP_S = 1.4e-3  # the shortest clean step of bench/diagnose_overhead.py


def per_call(fn, calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - started) / calls


def guarded_steps(check_every: int, steps: int) -> float:
    faults.CHECK_EVERY = check_every
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    guard = faults.NonFiniteGuard("stop")
    x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))
    started = time.perf_counter()
    for step in range(steps):
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        guard.observe(loss, epoch=0, step=step, batch=step)
        if guard.step_ok():
            opt.step()
    guard.flush()
    return (time.perf_counter() - started) / steps


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--steps", type=int, default=400)
    args = parser.parse_args()
    torch.set_num_threads(1)
    intervals = [(p, i * 1e-4, (i + 1) * 1e-4) for i, p in enumerate(
        ["other", "data", "other", "h2d", "forward", "other", "optimizer", "backward",
         "optimizer", "other"]
    )]  # fmt: skip
    reader = MemoryReader()
    memory, spans, ratios, old_s, new_s = [], [], [], [], []
    for _ in range(args.repeats):
        memory.append(per_call(reader.allocated, 2000))
        spans.append(per_call(lambda: (_phase_seconds(intervals), _spans(intervals, 0.0)), 2000))
        old = guarded_steps(0, args.steps)
        new = guarded_steps(16, args.steps)
        old_s.append(old)
        new_s.append(new)
        ratios.append(old / new)
    mem, span = statistics.median(memory), statistics.median(spans)
    print(f"memory read per step end: {1e6 * mem:.1f} us ({100 * mem / STEP_S:.2f}% of 1.4 ms)")
    print(
        f"phase seconds and spans per step (10 intervals): {1e6 * span:.1f} us ({100 * span / STEP_S:.2f}%)"
    )
    print(
        f"Trainer step with NaN flags read every step {1e3 * statistics.median(old_s):.3f} ms, "
        f"every 16 steps {1e3 * statistics.median(new_s):.3f} ms: ratio {statistics.median(ratios):.3f}x "
        f"(min {min(ratios):.3f}, max {max(ratios):.3f}, {args.repeats} interleaved rounds)"
    )


if __name__ == "__main__":
    main()
