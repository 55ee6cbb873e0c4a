"""DataLoader worker sweep: 0, 1, 2, 4, ... up to the cores, with persistent workers, pinned
memory on CUDA and a prefetch factor; every count repeated and interleaved."""

from __future__ import annotations

from dataclasses import dataclass, field

from torchdoctor.trials.tuning.probe import ProbeResult, RecipeProber
from torchdoctor.trials.tuning.repeated import beats, measure

# A point must beat the best so far by this factor to count as an improvement (timing noise).
MIN_IMPROVEMENT = 1.05


@dataclass
class WorkerPoint:
    workers: int
    result: ProbeResult  # samples_per_s: the median of the repeats
    rates: list[float] = field(default_factory=list)  # samples/s of each repeat


def worker_counts(cores: int) -> list[int]:
    counts, n = [0, 1], 2
    while n <= cores:
        counts.append(n)
        n *= 2
    if cores > 1 and counts[-1] != cores:
        counts.append(cores)
    return counts


def sweep_workers(
    prober: RecipeProber, cores: int, pin_memory: bool, repeats: int = 3
) -> tuple[list[WorkerPoint], int]:
    """Every worker count measured `repeats` times, interleaved; the best is the fewest workers
    within the noise of the fastest count that beats no workers beyond the noise (0 when none
    does: workers that are not surely faster only cost memory and start-up)."""
    counts = worker_counts(cores)
    configs = {
        workers: dict(
            workers=workers,
            pin_memory=pin_memory and workers > 0,
            persistent_workers=True,
            prefetch_factor=2,
        )
        for workers in counts
    }
    measured = measure(configs, lambda changes, _evaluate: prober.run(**changes), repeats)
    points = [WorkerPoint(n, measured[n].result, list(measured[n].rates)) for n in counts]
    none = points[0].rates
    faster = [p for p in points[1:] if beats(p.rates, none, MIN_IMPROVEMENT)]
    if not faster:
        return points, 0
    top = max(faster, key=lambda p: p.result.samples_per_s or 0.0)
    enough = next(p for p in faster if not beats(top.rates, p.rates, MIN_IMPROVEMENT))
    return points, enough.workers
