"""What keeps a what-if probe honest and harmless: the program's RNG streams are put back after
it, its time is bounded by a budget, and its timings are interleaved medians."""

from __future__ import annotations

import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import torch

from torchdoctor.diagnose.observations import WhatIfTiming


@contextmanager
def program_state_kept() -> Iterator[None]:
    """Put back every random stream the program can read (torch CPU and CUDA, Python's random,
    NumPy's global one) and the grad mode: a side DataLoader seeds its workers from torch's
    generator, dropout in a copied model draws from it."""
    cpu = torch.get_rng_state()
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None
    python = random.getstate()
    numpy = sys.modules.get("numpy")
    numpy_state = numpy.random.get_state() if numpy is not None else None
    grad = torch.is_grad_enabled()
    try:
        yield
    finally:
        torch.set_grad_enabled(grad)
        torch.set_rng_state(cpu)
        if cuda is not None:
            torch.cuda.set_rng_state_all(cuda)
        random.setstate(python)
        if numpy is not None and numpy_state is not None:
            numpy.random.set_state(numpy_state)


class Budget:
    """Wall-time allowance of all what-if probes together."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.perf_counter) -> None:
        self.seconds = seconds
        self.clock = clock
        self.start = clock()

    @property
    def spent(self) -> float:
        return self.clock() - self.start

    @property
    def left(self) -> float:
        return max(0.0, self.seconds - self.spent)


def synchronize(device_type: str) -> None:
    if device_type == "cuda":
        torch.cuda.synchronize()


def timed(
    work: Callable[[], object], device_type: str, clock: Callable[[], float] = time.perf_counter
) -> float:
    synchronize(device_type)
    start = clock()
    work()
    synchronize(device_type)
    return clock() - start


def compute_clock(device_type: str) -> Callable[[], float]:
    """The clock for timing compute that runs in this thread alone: on a CPU with one intra-op
    thread, the process's CPU time (what another process's load preempts is not the fix's
    doing); else wall time (a GPU, or several threads whose parallel speed-up is the point)."""
    if device_type == "cpu" and torch.get_num_threads() == 1:
        return time.process_time
    return time.perf_counter


def interleaved_medians(
    variants: dict[str, Callable[[], object]],
    device_type: str,
    allowance_s: float,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[dict[str, float], int]:
    """Median seconds per call of each variant, timed in interleaved rounds (a load change on
    the machine hits every variant alike) until `allowance_s` is spent (3..15 rounds), after one
    untimed warm-up call each. `clock` times the rounds (`compute_clock`: CPU time where that
    is the fairer measure). Returns the medians and the rounds timed."""
    # warm-up, on the wall clock: the allowance is wall time
    first = {name: timed(work, device_type) for name, work in variants.items()}
    per_round = max(sum(first.values()), 1e-6)
    rounds = int(max(3, min(15, allowance_s / per_round)))
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(rounds):
        for name, work in variants.items():
            samples[name].append(timed(work, device_type, clock))
    return {name: statistics.median(values) for name, values in samples.items()}, rounds


def compare(
    name: str,
    unit: str,
    setting: str,
    variants: tuple[Callable[[], object], Callable[[], object]],
    device_type: str,
    allowance_s: float,
    clock: Callable[[], float] = time.perf_counter,
) -> WhatIfTiming:
    """One timing of `name`: the work as run vs with the fix (`variants`), interleaved."""
    as_run, fix = variants
    medians, rounds = interleaved_medians(
        {"as run": as_run, "fix": fix}, device_type, allowance_s, clock
    )
    return WhatIfTiming(
        name=name,
        unit=unit,
        as_run_s=medians["as run"],
        alternative_s=medians["fix"],
        repeats=rounds,
        setting=setting,
    )
