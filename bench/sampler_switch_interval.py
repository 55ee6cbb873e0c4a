"""What the switch interval the line sampler sets while diagnosing (diagnose/probes/lines.py,
SWITCH_INTERVAL_S) costs the training step, and what it does to the line a sample lands on.

While the sampler waits for the GIL, Python asks the training thread to drop it after the switch
interval; a sample lands where the training thread drops it. A short interval lands samples on
Python work shorter than Python's 5 ms default (a NumPy or Python loop of 1-2 ms) but stops the
training thread in the middle of Python code more often; a longer one waits for the next line
that releases the GIL (the next torch op), which then gets the Python work's samples.

Two parts, each in paired interleaved rounds in one process (bench/_paired.py):
1. cost: rows of bench/diagnose_overhead.py (`--loops`) run plain, under torchdoctor.watch()
   without the line sampler, and with it at each interval of `--intervals` (ms); main-thread
   CPU-time ratios against plain, against no sampler and against the first interval, then the
   wall-time and whole-process CPU ratios (the `prefetch_thread` row: a program whose own
   Python thread is busy waits for the GIL at each hand-over, which is not the main thread's
   CPU; the hand-overs' own cost is in both threads' CPU).
2. accuracy: a loop whose step is torch work (a matmul chain, about 3 ms, the GIL released)
   then a pure-Python function of `--python-ms` (each value in turn), timed by the loop itself;
   per interval, the share of the step the sampler books to that function's lines over the
   share the loop's own clock measured (1.00: exact; 0.5: half its time booked elsewhere).
3. threads: what the interval alone costs a program with two Python threads (a producer thread
   and the main thread, each 1 ms of Python per item, a queue between them), no torchdoctor:
   main-thread CPU time per item at each interval over Python's default, interleaved.

4. split (`--parts split`, not run by default): where the sampler's cost is instead, on the
   `--loops` rows: with/without-sampler CPU-time ratios with the sampler thread not started (its
   phase listener and step-close mark only), with the thread waking at its rate but finding no
   frame to walk (its wake-ups and GIL hand-overs), and whole.

A negative interval in `--intervals` is the toggled variant: Python's default while the sampler
sleeps, the interval only for the last LEAD_S before each sample (the sampler needs the GIL to
set it, so it wakes, sets it and sleeps LEAD_S more).

    OMP_NUM_THREADS=1 .venv/bin/python bench/sampler_switch_interval.py [--rounds 8]
        [--steps 60] [--loops mlp,transformer_lm] [--intervals 0.2,1,2,-0.2] [--python-ms 1,2]
"""

from __future__ import annotations

import argparse
import contextlib
import queue
import statistics
import sys
import threading
import time
from pathlib import Path

import torch

import torchdoctor
from _paired import StepTimes, interleaved, paired_ratio
from diagnose_overhead import LOOPS
from torchdoctor.diagnose.probes import lines


def with_interval(interval_ms: float, body):
    """`body()` with the sampler's switch interval set to `interval_ms` for the rounds it runs;
    a negative `interval_ms`: 0.2 ms set only for the last LEAD_S before each sample (toggled)."""
    before, install = lines.SWITCH_INTERVAL_S, lines.LineSampler.install
    lines.SWITCH_INTERVAL_S = abs(interval_ms) / 1000
    if interval_ms < 0:
        lines.LineSampler.install = _toggled_install  # type: ignore[method-assign]
    try:
        return body()
    finally:
        lines.SWITCH_INTERVAL_S, lines.LineSampler.install = before, install
        sys.setswitchinterval(DEFAULT_SWITCH_S)


DEFAULT_SWITCH_S = sys.getswitchinterval()
LEAD_S = 0.0005  # the toggled variant: how long before a sample the interval is lowered


class _LoweredBeforeSample:
    """The sampler's stop event, its waits made of two: Python's interval while the sampler
    sleeps, the sampler's for the last LEAD_S (the GIL is needed to set it, so the sampler
    wakes, waits for the GIL at Python's interval, sets it, and sleeps LEAD_S more)."""

    def __init__(self, event: threading.Event, low: float) -> None:
        self.event, self.low = event, low

    def set(self) -> None:
        self.event.set()

    def wait(self, timeout: float) -> bool:
        sys.setswitchinterval(DEFAULT_SWITCH_S)
        if self.event.wait(max(0.0, timeout - LEAD_S)):
            return True
        sys.setswitchinterval(self.low)
        return self.event.wait(min(LEAD_S, timeout))


_install = lines.LineSampler.install


def _toggled_install(self, patcher) -> None:
    _install(self, patcher)
    self._stop = _LoweredBeforeSample(self._stop, lines.SWITCH_INTERVAL_S)


def cost(name: str, args) -> None:
    run = LOOPS[name](argparse.Namespace(batch_size=128, width=512))
    run(args.warmup)

    def watched(line_profile: bool = True) -> StepTimes:
        watch = torchdoctor.watch(warmup=args.warmup)
        watch.config.line_profile = line_profile  # False: every probe but the line sampler
        with watch:
            return run(args.warmup + args.steps)[args.warmup :]

    modes = {
        "plain": lambda: run(args.warmup + args.steps)[args.warmup :],
        "no sampler": lambda: watched(line_profile=False),
    }
    for ms in args.intervals:
        modes[_mode(ms)] = lambda ms=ms: with_interval(ms, watched)
    rounds = interleaved(modes, args.rounds)
    first = _mode(args.intervals[0])
    print(
        f"{name}: {args.rounds} rounds x {args.steps} steps, main-thread CPU time, paired ratios "
        f"(median [quartiles] over rounds); plain step {1000 * _median_step(rounds['plain']):.3f} ms"
    )
    for mode, times in rounds.items():
        if mode == "plain":
            continue
        line = f"  {mode:16s} / plain {paired_ratio(rounds['plain'], times, 1).describe()}"
        if mode != "no sampler":
            line += f"; / no sampler {paired_ratio(rounds['no sampler'], times, 1).describe()}"
        if mode not in ("no sampler", first):
            line += f"; / {first} {paired_ratio(rounds[first], times, 1).describe()}"
        print(line)
        # wall too: a program with busy Python threads of its own waits for the GIL (no CPU
        # time of the main thread) at every hand-over the interval makes
        # and the whole process's CPU: the hand-overs' own cost, in both threads
        for clock, index in (("wall", 0), ("proc", 3)):
            line = f"  {'':16s} {clock} / plain {paired_ratio(rounds['plain'], times, index).describe()}"
            if mode != "no sampler":
                no_sampler = paired_ratio(rounds["no sampler"], times, index)
                line += f"; / no sampler {no_sampler.describe()}"
            print(line)


def _mode(interval_ms: float) -> str:
    return f"{-interval_ms:g} ms toggled" if interval_ms < 0 else f"{interval_ms:g} ms"


def _median_step(rounds: list[StepTimes]) -> float:
    return statistics.median(statistics.median(t[1] for t in steps) for steps in rounds)


SPLIT_MODES = ("no thread", "thread, no walk", "whole")


def _split_install(mode: str):
    """LineSampler.install for one of SPLIT_MODES."""

    def install(self, patcher) -> None:
        run = lines.LineSampler._run
        if mode == "no thread":
            lines.LineSampler._run = lambda self: None  # type: ignore[method-assign]
        try:
            _install(self, patcher)
        finally:
            lines.LineSampler._run = run  # type: ignore[method-assign]
        if mode == "thread, no walk":
            self._main = -1  # no thread has this id: every wake-up finds no frame

    return install


def split(name: str, args) -> None:
    run = LOOPS[name](argparse.Namespace(batch_size=128, width=512))
    run(args.warmup)

    def watched(mode: str) -> StepTimes:
        lines.LineSampler.install = _split_install(mode)  # type: ignore[method-assign]
        try:
            watch = torchdoctor.watch(warmup=args.warmup)
            watch.config.line_profile = mode != "no sampler"
            with watch:
                return run(args.warmup + args.steps)[args.warmup :]
        finally:
            lines.LineSampler.install = _install  # type: ignore[method-assign]

    modes = {mode: lambda mode=mode: watched(mode) for mode in ("no sampler", *SPLIT_MODES)}
    rounds = interleaved(modes, args.rounds)
    print(f"split, {name}: {args.rounds} rounds x {args.steps} steps, main-thread CPU time")
    for mode in SPLIT_MODES:
        print(
            f"  {mode:16s} / no sampler {paired_ratio(rounds['no sampler'], rounds[mode], 1).describe()}"
        )


def spin(iterations: int) -> int:
    total = 0
    for i in range(iterations):
        total += i * i
    return total


def iterations_for(ms: float) -> int:
    """Iterations of `spin` that take about `ms` on this machine now (the fastest of 20)."""
    best = min(_timed(lambda: spin(10_000)) for _ in range(20))
    return max(1, round(10_000 * ms / 1000 / best))


def _timed(body) -> float:
    start = time.perf_counter()
    body()
    return time.perf_counter() - start


def accuracy_round(iterations: int, steps: int, warmup: int) -> float:
    """The sampled share of the Python line over its share by the loop's own clock."""
    torch.manual_seed(0)
    weights = [torch.nn.Parameter(torch.randn(128, 128) / 12) for _ in range(4)]
    optimizer = torch.optim.SGD(weights, lr=1e-3)
    python_s = 0.0
    with torchdoctor.watch(warmup=warmup, whatif=False) as watch:
        for index in range(warmup + steps):
            if index == warmup:
                first = time.perf_counter()
            x = torch.randn(256, 128)
            for w in weights:
                x = torch.tanh(x @ w)
            optimizer.zero_grad()
            x.square().mean().backward()
            optimizer.step()
            mid = time.perf_counter()
            spin(iterations)
            if index >= warmup:
                python_s += time.perf_counter() - mid
        step_s = time.perf_counter() - first
    sampled = [ln for ln in watch.report.run.lines.lines if ln.function == "spin"]
    return sum(ln.self_share for ln in sampled) / (python_s / step_s)


def accuracy(args) -> None:
    print(
        f"accuracy: a ~3 ms torch step then a Python function; sampled share / "
        f"measured share, median [quartiles] over {args.rounds} rounds x {args.accuracy_steps} "
        "steps"
    )
    for python_ms in args.python_ms:
        iterations = iterations_for(python_ms)
        modes = {
            _mode(ms): lambda ms=ms, n=iterations: with_interval(
                ms, lambda: accuracy_round(n, args.accuracy_steps, args.warmup)
            )
            for ms in args.intervals
        }
        rounds = interleaved(modes, args.rounds)
        for mode, ratios in rounds.items():
            low, _, high = statistics.quantiles(ratios, n=4)
            print(
                f"  Python line of {python_ms:g} ms, switch interval {mode:16s} "
                f"{statistics.median(ratios):.2f} [{low:.2f}-{high:.2f}]"
            )


def threads_round(interval_s: float, items: int, iterations: int) -> float:
    """Main-thread CPU seconds per item, a producer thread feeding it, at `interval_s`."""
    ready: queue.Queue[int] = queue.Queue(maxsize=4)
    done = threading.Event()

    def produce() -> None:
        while not done.is_set():
            spin(iterations)
            with contextlib.suppress(queue.Full):
                ready.put(1, timeout=0.01)

    sys.setswitchinterval(interval_s)
    producer = threading.Thread(target=produce, daemon=True)
    producer.start()
    try:
        start = time.thread_time()
        for _ in range(items):
            ready.get()
            spin(iterations)
        return (time.thread_time() - start) / items
    finally:
        done.set()
        producer.join()
        sys.setswitchinterval(DEFAULT_SWITCH_S)


def threads(args) -> None:
    iterations = iterations_for(1)
    modes = {
        f"{ms:g} ms": lambda ms=ms: threads_round(ms / 1000, 300, iterations)
        for ms in [DEFAULT_SWITCH_S * 1000] + [abs(ms) for ms in args.intervals if ms > 0]
    }
    rounds = interleaved(modes, args.rounds)
    default = rounds.pop(f"{DEFAULT_SWITCH_S * 1000:g} ms")
    print(
        "threads: two Python threads (1 ms of Python per item each), no torchdoctor; main-thread "
        f"CPU per item over Python's {DEFAULT_SWITCH_S * 1000:g} ms interval, median [quartiles] "
        f"over {args.rounds} rounds"
    )
    for mode, values in rounds.items():
        ratios = [v / d for v, d in zip(values, default, strict=True)]
        low, _, high = statistics.quantiles(ratios, n=4)
        print(
            f"  switch interval {mode:16s} {statistics.median(ratios):.3f} [{low:.3f}-{high:.3f}]"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--accuracy-steps", type=int, default=150)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--loops", default="mlp,transformer_lm")
    parser.add_argument(
        "--intervals",
        default="0.2,1,2,-0.2",
        help="switch intervals, ms; negative: set only for the last 0.5 ms before a sample",
    )
    parser.add_argument("--python-ms", default="1,2", help="the accuracy loop's Python line, ms")
    parser.add_argument("--parts", default="cost,accuracy,threads", help="comma-separated")
    args = parser.parse_args()
    args.intervals = [float(v) for v in args.intervals.split(",")]
    args.python_ms = [float(v) for v in args.python_ms.split(",")]
    torch.set_num_threads(1)
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"load before: {load}")
    parts = args.parts.split(",")
    if "cost" in parts:
        for name in args.loops.split(","):
            cost(name, args)
    if "accuracy" in parts:
        accuracy(args)
    if "threads" in parts:
        threads(args)
    if "split" in parts:
        for name in args.loops.split(","):
            split(name, args)
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"load after: {load}")


if __name__ == "__main__":
    main()
