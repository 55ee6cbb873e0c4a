"""What-if: an epoch's start with the program's DataLoader workers started afresh
(`persistent_workers=False`, as run) vs kept alive and reused (`persistent_workers=True`). A side
DataLoader with the program's dataset, batch size, collate and worker count times the first batch
of a fresh iterator against the first batch of a reused persistent one, interleaved rounds. The
difference is what each epoch (each `iter(loader)`) pays for starting workers."""

from __future__ import annotations

import statistics
import time

from torch.utils.data import DataLoader

from torchdoctor.diagnose.observations import WhatIfTiming
from torchdoctor.diagnose.whatif.data import side_loader, side_run_unsupported

MIN_ROUNDS, MAX_ROUNDS = 3, 7


def unsupported(loader: DataLoader) -> str:
    """Why the loader's epoch start cannot be re-created ("" when it can)."""
    if not loader.num_workers or loader.persistent_workers:
        return "a loader without workers started every epoch"
    return side_run_unsupported(loader, 2)


def _first_batch_s(loader: DataLoader) -> float:
    """Seconds from iter(loader) to its first batch; a fresh iterator's workers are shut down
    afterwards, outside the timing."""
    start = time.perf_counter()
    iterator = iter(loader)
    next(iterator)
    elapsed = time.perf_counter() - start
    del iterator
    return elapsed


def measure(loader: DataLoader, allowance_s: float) -> list[WhatIfTiming]:
    workers = loader.num_workers
    fresh = side_loader(loader, workers, persistent_workers=False)
    kept = side_loader(loader, workers, persistent_workers=True)
    try:
        started = time.perf_counter()
        _first_batch_s(kept)  # starts the persistent workers once, as the fix's first epoch does
        as_run, alternative = [_first_batch_s(fresh)], [_first_batch_s(kept)]
        per_round = max(time.perf_counter() - started, 1e-6) * 2 / 3  # two of the three calls
        rounds = int(max(MIN_ROUNDS, min(MAX_ROUNDS, allowance_s / per_round)))
        for _ in range(rounds - 1):
            as_run.append(_first_batch_s(fresh))
            alternative.append(_first_batch_s(kept))
    finally:
        iterator = getattr(kept, "_iterator", None)
        if iterator is not None:
            iterator._shutdown_workers()
        kept._iterator = None
    return [
        WhatIfTiming(
            name="data.persistent_workers",
            unit="epoch start",
            as_run_s=statistics.median(as_run),
            alternative_s=statistics.median(alternative),
            repeats=len(as_run),
            setting="persistent_workers=True",
        )
    ]
