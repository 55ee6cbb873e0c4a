"""The line sampler on a contended core: what it costs the training step and how far its phase
shares drift from the step tracker's, with this process pinned to one core beside `--busy`
busy-loop processes pinned to the same core (`--busy 0`: the core alone).

It runs tests/diagnose/rules/scripts/d801_parameter_loop.py (a 37-layer MLP step on 16 samples,
then a Python loop over the named parameters with in-place ops: about a fifth of the step at
idle, what rule D801 must name) under torchdoctor.watch(), stopped after `--steps`. Modes, in
paired interleaved rounds (bench/_paired.py): `no sampler` (every probe but the line sampler),
`sampler`, and `sampler, CPU read every step` (the step tracker reading the thread's CPU time at
every step close, as before CPU_SHARE_EVERY: diagnose/steps.py). Per mode it prints the
sampler's cost (paired ratios against `no sampler` of the median step's wall time and of the
round's main-thread CPU time per step) and the bias, median over rounds: the largest gap between
a phase's share of the sampled time (`lines.phase_seconds`, the time torchdoctor took to close a
step folded into `other`, where the tracker books it) and its share in the tracker's breakdown;
the share of the sampled time booked to torchdoctor's step close; and the parameter loop's share
of the step (its lines' own time).

    OMP_NUM_THREADS=1 .venv/bin/python bench/sampler_contention.py --busy 2 [--rounds 6]
        [--steps 60]
"""

from __future__ import annotations

import argparse
import os
import runpy
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

import torchdoctor
from _busy import busy_loops, stop
from _paired import StepTimes, interleaved, print_ratios
from torchdoctor.diagnose import steps as step_tracker
from torchdoctor.diagnose.line_profile import OURS
from torchdoctor.diagnose.session import StopDiagnosis

SCRIPT = (
    Path(__file__).resolve().parent.parent / "tests/diagnose/rules/scripts/d801_parameter_loop.py"
)
LOOP_TEXT = "param."  # the parameter loop's lines


def run_script(watch, steps: int) -> StepTimes:
    """The planted script under `watch`, stopped after its measured steps: (wall, CPU) per
    measured step, the CPU time being the main thread's mean over the measured steps (read once
    before and once after them: a reading per step would be a syscall at every step close, the
    very thing this bench is about)."""
    watch.config.stop = True
    cpu: list[float] = []

    def at_step_end(record) -> None:
        first = watch.session.first_measured
        if record.index in (first - 1, first + steps - 1):
            cpu.append(time.thread_time())

    with watch:
        # before the session's own listener, which stops the program at the last measured step
        watch.session.tracker.on_step_end.insert(0, at_step_end)
        try:
            runpy.run_path(str(SCRIPT), run_name="__main__")
        except StopDiagnosis:
            pass
    measured = watch.report.run.steps
    assert len(cpu) == 2 and len(measured) == steps, (len(cpu), len(measured))
    return [(step.wall_s, (cpu[1] - cpu[0]) / steps) for step in measured]


@dataclass
class Bias:
    phase_gap: list[float] = field(default_factory=list)  # largest |sampled - tracker| share
    ours: list[float] = field(default_factory=list)  # sampled share booked to the step close
    loop: list[float] = field(default_factory=list)  # the parameter loop's share of the step

    def add(self, report) -> None:
        seconds = dict(report.run.lines.phase_seconds)
        total = sum(seconds.values())
        if total <= 0:
            return
        ours = seconds.pop(OURS, 0.0)
        seconds["other"] = seconds.get("other", 0.0) + ours
        breakdown = report.breakdown
        phases = set(seconds) | {p for p, share in breakdown.items() if share > 0}
        self.phase_gap.append(
            max(abs(seconds.get(p, 0.0) / total - breakdown.get(p, 0.0)) for p in phases)
        )
        self.ours.append(ours / total)
        lines = [ln for ln in report.run.lines.lines if LOOP_TEXT in ln.code]
        self.loop.append(sum(ln.self_share for ln in lines))

    def describe(self) -> str:
        def mid(values: list[float]) -> str:
            return f"{statistics.median(values):.2f}" if values else "-"

        return (
            f"largest phase-share gap {mid(self.phase_gap)}, torchdoctor's step close "
            f"{mid(self.ours)} of the sampled time, parameter loop {mid(self.loop)} of the step"
        )


def watched_round(args, line_profile: bool, cpu_every: int, bias: Bias | None) -> StepTimes:
    before = step_tracker.CPU_SHARE_EVERY
    step_tracker.CPU_SHARE_EVERY = cpu_every
    try:
        watch = torchdoctor.watch(steps=args.steps, warmup=args.warmup, whatif=False)
        watch.config.line_profile = line_profile
        times = run_script(watch, args.steps)
    finally:
        step_tracker.CPU_SHARE_EVERY = before
    if bias is not None:
        bias.add(watch.report)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--busy", type=int, default=2, help="busy loops pinned to our core")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--steps", type=int, default=60, help="measured steps per round")
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    core = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {core})  # this thread, and the sampler thread it starts
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"core {core}, {args.busy} busy loop(s) on it; load before: {load}")
    runpy.run_path(str(SCRIPT))  # imports torch's modules the script uses before any round
    biases = {"sampler": Bias(), "sampler, CPU read every step": Bias()}
    every = step_tracker.CPU_SHARE_EVERY
    loops = busy_loops(args.busy, core)
    try:
        rounds = interleaved(
            {
                "no sampler": lambda: watched_round(args, False, every, None),
                "sampler": lambda: watched_round(args, True, every, biases["sampler"]),
                "sampler, CPU read every step": lambda: watched_round(
                    args, True, 1, biases["sampler, CPU read every step"]
                ),
            },
            args.rounds,
        )
    finally:
        stop(loops)
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"load after: {load}; {args.rounds} rounds x {args.steps} steps per mode")
    for mode, bias in biases.items():
        print(f"{mode}:")
        print_ratios("no sampler", "sampler", rounds["no sampler"], rounds[mode], indent="    ")
        print(f"    bias (median over rounds): {bias.describe()}")


if __name__ == "__main__":
    main()
