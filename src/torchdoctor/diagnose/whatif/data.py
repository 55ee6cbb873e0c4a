"""What-if: the training DataLoader as the program ran it (num_workers=0) vs with n worker
processes (n = 1 .. cores-1, at most 3 settings), each fetching K batches through a side DataLoader
over the same dataset *while a replay of the training compute runs after every batch*, so the
workers compete for the cores as they would in the program. The first batch of each setting (the
workers' start-up) is timed apart: it is what `persistent_workers=False` pays every epoch."""

from __future__ import annotations

import copy
import os
import time
from typing import Any

from torch.utils.data import BatchSampler, DataLoader, IterableDataset, SequentialSampler

from torchdoctor.diagnose.observations import WhatIfTiming
from torchdoctor.diagnose.whatif.guard import synchronize
from torchdoctor.diagnose.whatif.replay import Replay

MAX_SETTINGS = 3
MIN_BATCHES, MAX_BATCHES = 4, 40


def worker_counts(cpus: int) -> list[int]:
    """1 .. cpus-1 workers (a core stays with the training process), at most MAX_SETTINGS of
    them spread over the range."""
    top = max(1, cpus - 1)
    if top <= MAX_SETTINGS:
        return list(range(1, top + 1))
    return sorted({1, max(1, top // 2), top})


def _private_copy(dataset: Any) -> Any:
    """A shallow copy of the dataset whose own random generators (NumPy Generator/RandomState,
    random.Random, torch.Generator attributes) are copies: fetching in this process (the
    num_workers=0 side) must not advance the program's augmentation streams. Its arrays are
    shared, never copied."""
    import random

    import numpy as np
    import torch

    generators = (np.random.Generator, np.random.RandomState, random.Random, torch.Generator)
    try:
        private = copy.copy(dataset)
        for name, value in vars(dataset).items():
            if isinstance(value, generators):
                clone: Any
                if isinstance(value, torch.Generator):
                    clone = torch.Generator(value.device)
                    clone.set_state(value.get_state())
                else:
                    clone = copy.deepcopy(value)
                setattr(private, name, clone)
    except TypeError:  # no __dict__ (slots) or uncopyable: fetch from the program's own object
        return dataset
    return private


def _side_loader(loader: DataLoader, workers: int) -> DataLoader:
    """Same dataset, batch size, collate and worker set-up; batches in dataset order (the
    program's sampler, and any generator it owns, are left alone)."""
    dataset: Any = _private_copy(loader.dataset)  # sized: unsupported() said so
    sampler = BatchSampler(SequentialSampler(dataset), loader.batch_size or 1, drop_last=False)
    return DataLoader(
        dataset,
        batch_sampler=sampler,
        collate_fn=loader.collate_fn,
        num_workers=workers,
        pin_memory=loader.pin_memory,
        worker_init_fn=loader.worker_init_fn,
        multiprocessing_context=loader.multiprocessing_context if workers else None,
        prefetch_factor=(loader.prefetch_factor or 2) if workers else None,
    )


def _fetch_while_computing(
    loader: DataLoader, workers: int, batches: int, replay: Replay
) -> tuple[float, float]:
    """(seconds to the first batch, seconds per later batch with the compute replayed)."""
    side = _side_loader(loader, workers)
    start = time.perf_counter()
    iterator = iter(side)
    try:
        next(iterator)
        first = time.perf_counter() - start
        replay.forward_backward()
        synchronize(replay.device_type)
        start = time.perf_counter()
        for _ in range(batches - 1):
            next(iterator)
            replay.forward_backward()
        synchronize(replay.device_type)
        return first, (time.perf_counter() - start) / (batches - 1)
    finally:
        del iterator  # shuts the workers down


def unsupported(loader: DataLoader) -> str:
    """Why the loader cannot be re-created for a side run ("" when it can)."""
    if isinstance(loader.dataset, IterableDataset):
        return "an IterableDataset (its sharding across workers is the program's)"
    if loader.batch_size is None:
        return "a loader built with its own batch_sampler"
    if loader.num_workers:
        return "a loader that already has workers"
    try:
        length = len(loader.dataset)  # type: ignore[arg-type]
    except TypeError:
        return "a dataset without a length"
    if length < MIN_BATCHES * loader.batch_size:
        return "a dataset of fewer than 4 batches"
    return ""


def measure_workers(
    loader: DataLoader, replay: Replay, step_s: float, allowance_s: float
) -> list[WhatIfTiming]:
    """One timing per worker count; `step_s` (the measured step) sizes the number of batches.
    The as-run side (num_workers=0) is timed before and after the variants (drift averaged)."""
    counts = worker_counts(os.cpu_count() or 1)
    runs = len(counts) + 2
    available = len(loader.dataset) // loader.batch_size  # type: ignore[arg-type, operator]
    batches = int(min(MAX_BATCHES, available, max(MIN_BATCHES, allowance_s / runs / step_s)))
    _, before = _fetch_while_computing(loader, 0, batches, replay)
    measured = [(n, *_fetch_while_computing(loader, n, batches, replay)) for n in counts]
    _, after = _fetch_while_computing(loader, 0, batches, replay)
    as_run = (before + after) / 2
    return [
        WhatIfTiming(
            name="data.workers",
            unit="training step",
            as_run_s=as_run,
            alternative_s=per_batch,
            repeats=batches - 1,
            setting=f"num_workers={n}",
            startup_s=first,
        )
        for n, first, per_batch in measured
    ]
