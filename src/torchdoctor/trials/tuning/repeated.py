"""Repeated, interleaved measurements for `tune`: each distinct configuration is measured
`repeats` times, round by round (the next round in reverse order, so a load drift hits every
configuration alike), and measured once however many rows or stages show it.

A configuration beats another beyond the noise only when its slowest repeat is faster than the
other's fastest and its median is faster by the margin: on a shared machine one lucky run must
not decide what is written into a config.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import TypeVar

from torchdoctor.trials.tuning.probe import ProbeResult

Key = TypeVar("Key", bound=Hashable)


@dataclass
class Repeated:
    """One configuration's repeats; `result` is the first (evaluated) one, rate set to the
    median of the repeats."""

    result: ProbeResult
    rates: list[float] = field(default_factory=list)  # samples/s of each repeat that ran


def config_key(changes: dict) -> Hashable:
    """Equal TrainerConfig changes give equal keys (lists and dicts compared by value)."""
    return tuple(sorted((name, repr(value)) for name, value in changes.items()))


def measure(
    configs: dict[Key, dict],
    run: Callable[[dict, bool], ProbeResult],
    repeats: int,
) -> dict[Key, Repeated]:
    """key -> Repeated for each configuration; `run(changes, evaluate)` probes one of them
    (evaluated in the first round only: accuracy after a fixed budget does not need repeats)."""
    results: dict[Key, list[ProbeResult]] = {key: [] for key in configs}
    keys = list(configs)
    for round_ in range(repeats):
        for key in keys if round_ % 2 == 0 else reversed(keys):
            if results[key] and not results[key][0].ok:
                continue  # out of memory (or failed) once: it fails again, skip it
            results[key].append(run(configs[key], round_ == 0))
    return {key: _summary(found) for key, found in results.items()}


def _summary(found: list[ProbeResult]) -> Repeated:
    rates = [r.samples_per_s for r in found if r.ok and r.samples_per_s]
    first = found[0]
    if not rates:
        return Repeated(first, [])
    return Repeated(dataclasses.replace(first, samples_per_s=statistics.median(rates)), rates)


def beats(candidate: list[float], baseline: list[float], margin: float) -> bool:
    """Faster beyond the noise: every repeat faster than every baseline repeat, and the median
    faster by `margin`. With single measurements only the margin can speak."""
    if not candidate or not baseline:
        return False
    faster = statistics.median(candidate) >= margin * statistics.median(baseline)
    if len(candidate) > 1 and len(baseline) > 1:
        return faster and min(candidate) > max(baseline)
    return faster


def spread(rates: list[float], baseline: list[float]) -> tuple[float, float] | None:
    """(slowest, fastest) repeat as a speedup over the baseline's median."""
    if not rates or not baseline:
        return None
    middle = statistics.median(baseline)
    return min(rates) / middle, max(rates) / middle
