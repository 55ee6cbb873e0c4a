"""What-if: an epoch's start with the program's DataLoader workers started afresh
(`persistent_workers=False`, as run) vs kept alive and reused (`persistent_workers=True`). A side
DataLoader with the program's dataset, batch size, collate and worker count times the first batch
of a fresh iterator and the shut-down of its workers against the first batch of a reused
persistent one, interleaved rounds. The difference is what each epoch (each `iter(loader)`) pays
for starting and stopping workers."""

from __future__ import annotations

import statistics
import time

from torch.utils.data import DataLoader

from torchdoctor.diagnose.observations import LoaderObservation, WhatIfTiming
from torchdoctor.diagnose.whatif.data import side_loader, side_run_unsupported
from torchdoctor.diagnose.whatif.guard import affordable_rounds

MIN_ROUNDS, MAX_ROUNDS = 3, 7


def unsupported(loader: DataLoader) -> str:
    """Why the loader's epoch start cannot be re-created ("" when it can)."""
    if not loader.num_workers or loader.persistent_workers:
        return "a loader without workers started every epoch"
    return side_run_unsupported(loader, 2)


def fewest_rounds_s(observation: LoaderObservation) -> float:
    """The least this probe takes on a loader whose epoch starts the program timed: MIN_ROUNDS
    fresh starts and the persistent workers' first one, each at the median start observed (the
    first epoch's may pay imports)."""
    starts = observation.worker_startup_s
    return (MIN_ROUNDS + 1) * statistics.median(starts) if starts else 0.0


def _epoch_start_and_end(loader: DataLoader) -> tuple[float, float]:
    """(seconds from iter(loader) to its first batch, seconds to shut its workers down): a fresh
    iterator pays both every epoch (the shut-down when the epoch's batches run out); a reused
    persistent one pays neither, only its first batch."""
    start = time.perf_counter()
    iterator = iter(loader)
    next(iterator)
    first = time.perf_counter() - start
    start = time.perf_counter()
    shutdown = getattr(iterator, "_shutdown_workers", None)
    if shutdown is not None and not loader.persistent_workers:
        shutdown()
    ended = time.perf_counter() - start
    del iterator
    return first, ended


def measure(loader: DataLoader, allowance_s: float) -> list[WhatIfTiming]:
    workers = loader.num_workers
    fresh = side_loader(loader, workers, persistent_workers=False)
    kept = side_loader(loader, workers, persistent_workers=True)
    try:
        # one fresh epoch start shows what a start costs: the persistent workers' first start
        # and the other MIN_ROUNDS - 1 fresh ones must fit in what is left of the budget, or
        # none starts (a slow worker set-up would overrun it; a reused start costs little)
        started = time.perf_counter()
        as_run = [_epoch_start_and_end(fresh)]
        fresh_s = max(time.perf_counter() - started, 1e-6)
        affordable_rounds(fresh_s, fewest=MIN_ROUNDS)
        started = time.perf_counter()
        _epoch_start_and_end(kept)  # starts the persistent workers, as the fix's first epoch
        alternative = [_epoch_start_and_end(kept)[0]]
        per_round = fresh_s + max(time.perf_counter() - started, 1e-6) / 2  # half: one reuse
        rounds = int(max(MIN_ROUNDS, min(MAX_ROUNDS, allowance_s / per_round)))
        rounds = min(rounds, affordable_rounds(per_round, fewest=MIN_ROUNDS - 1) + 1)
        for _ in range(rounds - 1):
            as_run.append(_epoch_start_and_end(fresh))
            alternative.append(_epoch_start_and_end(kept)[0])
    finally:
        iterator = getattr(kept, "_iterator", None)
        if iterator is not None:
            iterator._shutdown_workers()
        kept._iterator = None
    return [
        WhatIfTiming(
            name="data.persistent_workers",
            unit="epoch start",
            as_run_s=statistics.median(first + end for first, end in as_run),
            alternative_s=statistics.median(alternative),
            repeats=len(as_run),
            setting="persistent_workers=True",
            startup_s=statistics.median(first for first, _ in as_run),  # paid once with the fix
        )
    ]
