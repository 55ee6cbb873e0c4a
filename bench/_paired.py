"""Paired, interleaved rounds for the overhead benches, and the ratio lines they print.

On a shared machine the load swings step times several-fold within a minute, so modes are only
ever compared round against round: each round runs every mode once, back to back, in an order
that rotates and reverses from round to round (drifts hit every mode alike). A mode's cost is
the median over rounds of its per-round ratio to the base mode (each round summarised by its
median step), printed with the spread of those ratios (their middle half) so a reader can tell
a difference from the noise. Two clocks: wall time and the main thread's CPU time; with one
torch thread the CPU-time ratio is the one that stays meaningful on an overloaded machine. A
bench may add a third, the whole process's CPU time ("proc": other threads' work too).

Used by bench/diagnose_overhead.py, bench/memory_probe_overhead.py and bench/trial_overhead.py.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

# (wall, main-thread CPU seconds, ...) of each step; a bench may add the process's CPU seconds
# (every thread: the line sampler's too) as the fourth field
StepTimes = list[tuple]
CLOCKS = (("wall", 0), ("cpu", 1), ("proc", 3))
T = TypeVar("T")


def interleaved(modes: dict[str, Callable[[], T]], rounds: int) -> dict[str, list[T]]:
    """Run every mode once per round, the order rotating (and reversed every other round)."""
    names = list(modes)
    results: dict[str, list[T]] = {name: [] for name in names}
    for index in range(rounds):
        shift = index % len(names)
        order = names[shift:] + names[:shift]
        if index % 2:
            order.reverse()
        for name in order:
            results[name].append(modes[name]())
    return results


@dataclass
class PairedRatio:
    base_s: float  # median over rounds of the base mode's round medians
    mode_s: float
    ratio: float  # median over rounds of the per-round ratio mode / base
    low: float  # first and third quartiles of the per-round ratios
    high: float
    extra_s: float  # median over rounds of the per-round difference mode - base

    def describe(self) -> str:
        return (
            f"ratio {self.ratio:.3f} [{self.low:.3f}-{self.high:.3f}] "
            f"(+{1e6 * self.extra_s:.0f} us per step)"
        )


def paired_ratio(base: list[StepTimes], mode: list[StepTimes], clock: int) -> PairedRatio:
    """`base` and `mode`: step times of each round, rounds in the same order."""
    base_s = [statistics.median(t[clock] for t in steps) for steps in base]
    mode_s = [statistics.median(t[clock] for t in steps) for steps in mode]
    ratios = [m / b for b, m in zip(base_s, mode_s, strict=True)]
    low, _, high = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
    return PairedRatio(
        base_s=statistics.median(base_s),
        mode_s=statistics.median(mode_s),
        ratio=statistics.median(ratios),
        low=low,
        high=high,
        extra_s=statistics.median(m - b for b, m in zip(base_s, mode_s, strict=True)),
    )


def print_ratios(base_name: str, mode_name: str, base, mode, indent: str = "  ") -> None:
    """One line per clock the step times hold: both modes' median step and the paired ratio
    with its spread."""
    for clock, index in CLOCKS:
        if len(base[0][0]) <= index:
            continue
        r = paired_ratio(base, mode, index)
        print(
            f"{indent}{clock:4s}: {base_name} {1000 * r.base_s:.3f} ms, {mode_name} "
            f"{1000 * r.mode_s:.3f} ms, {mode_name}/{base_name} {r.describe()}; "
            f"median [quartiles] over {len(base)} paired rounds"
        )
