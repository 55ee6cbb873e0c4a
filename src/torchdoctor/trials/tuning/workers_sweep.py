"""DataLoader worker sweep: 0, 1, 2, 4, ... up to the cores, with persistent workers, pinned
memory on CUDA and a prefetch factor; stops once throughput stops improving."""

from __future__ import annotations

from dataclasses import dataclass

from torchdoctor.trials.tuning.probe import ProbeResult, RecipeProber

# A point must beat the best so far by this factor to count as an improvement (timing noise).
MIN_IMPROVEMENT = 1.05


@dataclass
class WorkerPoint:
    workers: int
    result: ProbeResult


def worker_counts(cores: int) -> list[int]:
    counts, n = [0, 1], 2
    while n <= cores:
        counts.append(n)
        n *= 2
    if cores > 1 and counts[-1] != cores:
        counts.append(cores)
    return counts


def sweep_workers(
    prober: RecipeProber, cores: int, pin_memory: bool
) -> tuple[list[WorkerPoint], int]:
    """Points measured, and the best worker count (the first within noise of the best)."""
    points: list[WorkerPoint] = []
    best: WorkerPoint | None = None
    for workers in worker_counts(cores):
        result = prober.run(
            workers=workers,
            pin_memory=pin_memory and workers > 0,
            persistent_workers=True,
            prefetch_factor=2,
        )
        point = WorkerPoint(workers, result)
        points.append(point)
        rate = result.samples_per_s or 0.0
        if best is None or rate > (best.result.samples_per_s or 0.0) * MIN_IMPROVEMENT:
            best = point
        elif workers > 1:
            break  # no longer improving: more workers only cost memory and start-up
    return points, best.workers
