"""What-if: the training DataLoader as the program ran it (num_workers=0) vs with n worker
processes (n = 1 .. cores, at most 3 settings), each fetching K batches through a side DataLoader
over the same dataset *while the training compute runs after every batch*, so the workers compete
for the cores as they would in the program. The compute is a replay of forward and backward on a
copy of the model, followed by busy CPU work up to the measured rest of the step (optimizer,
loss, logging): a replay of forward and backward alone is shorter than the step, and the workers
would look slower against it than against the program. The first batch of each setting (the
workers' start-up) is timed apart, and the batches the workers prefetched meanwhile are consumed
untimed: the steady state is what the fix changes for every batch of the run."""

from __future__ import annotations

import contextlib
import copy
import itertools
import time
from typing import Any

from torch.utils.data import BatchSampler, DataLoader, IterableDataset, SequentialSampler

from torchdoctor.cores import usable_cores
from torchdoctor.diagnose.observations import WhatIfTiming
from torchdoctor.diagnose.rules._common import MAX_WORKERS
from torchdoctor.diagnose.whatif.guard import OverBudget, affordable_rounds, require, synchronize
from torchdoctor.diagnose.whatif.replay import Replay

MAX_SETTINGS = 3
MIN_BATCHES, MAX_BATCHES = 4, 40
# one worker's head start (prefetch_factor 2) plus the first batch: a dataset needs this many
# batches more than MIN_BATCHES; worker counts whose head start does not fit are not timed
MIN_EXTRA_BATCHES = 3
# the side runs the probe cannot do without: the as-run side and one worker count
FEWEST_RUNS = 2
# a worker set's start before its first batch is known (fork, the worker's imports): predicted at
# this much until one was timed (fork start-ups here took 0.03-0.2 s, load 0-10)
WORKER_START_S = 0.1
SIZING_MARGIN = 2  # the side runs are sized for this fraction (1 / it) of the probe's allowance
# the most batches a side run fetches (its first, the largest head start, MAX_BATCHES timed): a
# loader built with its own batch_sampler has that many of the sampler's batches listed
SIDE_BATCHES = 1 + MAX_WORKERS * 2 + MAX_BATCHES


def worker_counts(cpus: int) -> list[int]:
    """1 .. cpus workers (as many as `--try workers` starts, at most MAX_WORKERS), at most MAX_SETTINGS of
    them spread over the range: when the step's compute is short, a worker per core is fastest,
    when it is long, one core is better left to the training process; the probe measures both."""
    top = max(1, min(MAX_WORKERS, cpus))
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


def _own_batches(loader: DataLoader) -> list[list[int]]:
    """The first SIDE_BATCHES batches of a copy of the loader's own batch_sampler: the batches
    the program fetched (their sizes, a bucketing sampler's grouping), while the program's
    sampler and any generator it owns are left alone (its draws from the global generators are
    put back by whatif.guard.program_state_kept)."""
    copied = copy.deepcopy(loader.batch_sampler)
    return [list(batch) for batch in itertools.islice(iter(copied), SIDE_BATCHES)]  # type: ignore[arg-type]


def _side_batches(loader: DataLoader, dataset: Any) -> Any:
    """What a side loader fetches: the program's own batch_sampler's batches (a copy's) where it
    was given one, else batches of its batch size in dataset order."""
    if loader.batch_size is None:
        return _own_batches(loader)
    return BatchSampler(SequentialSampler(dataset), loader.batch_size, drop_last=False)


def batch_count(loader: DataLoader) -> int:
    """Full batches a side loader can fetch (at most SIDE_BATCHES where the program gave its own
    batch_sampler)."""
    if loader.batch_size is None:
        return len(_own_batches(loader))
    return len(loader.dataset) // loader.batch_size  # type: ignore[arg-type]


def side_loader(loader: DataLoader, workers: int, **settings: Any) -> DataLoader:
    """Same dataset, batches, collate and worker set-up; batches in dataset order, or the first
    ones of a copy of the program's own batch_sampler (the program's sampler, and any generator
    it owns, are left alone). `settings` override."""
    dataset: Any = _private_copy(loader.dataset)  # sized: unsupported() said so
    arguments: dict[str, Any] = dict(
        batch_sampler=_side_batches(loader, dataset),
        collate_fn=loader.collate_fn,
        num_workers=workers,
        pin_memory=loader.pin_memory,
        worker_init_fn=loader.worker_init_fn,
        multiprocessing_context=loader.multiprocessing_context if workers else None,
        prefetch_factor=(loader.prefetch_factor or 2) if workers else None,
    )
    arguments.update(settings)
    return DataLoader(dataset, **arguments)


class StepCompute:
    """The training process's work between two batches: the replay's forward and backward, then
    CPU work up to `rest_s` (the program's measured step minus its data wait) when the replay is
    shorter. The padding spins rather than sleeps on CPU: the program's optimizer and Python use
    a core there, and the workers must compete with it."""

    def __init__(self, replay: Replay, rest_s: float) -> None:
        self.replay = replay
        started = time.perf_counter()
        replay.forward_backward()  # warm-up, and how long the replay alone takes
        synchronize(replay.device_type)
        self.pad_s = max(0.0, rest_s - (time.perf_counter() - started))

    def __call__(self) -> None:
        self.replay.forward_backward()
        if self.replay.device_type == "cpu":
            until = time.perf_counter() + self.pad_s
            while time.perf_counter() < until:
                pass
        else:
            synchronize(self.replay.device_type)
            time.sleep(self.pad_s)


def _prefetched(loader: DataLoader, workers: int) -> int:
    """Batches the workers build ahead while the first is awaited: taken at once, without the
    compute between them (which would let the workers build the next ones ahead as well), before
    the timing starts; else the timed batches would be ready at once and the workers would look
    faster than they are in the program's steady state."""
    return workers * (loader.prefetch_factor or 2) if workers else 0


def _fetch_while_computing(
    loader: DataLoader, workers: int, batches: int, compute: StepCompute
) -> tuple[float, float]:
    """(seconds to the first batch, seconds per batch once the workers' head start is used up,
    with the compute run after each batch). A run that goes past the budget (a worker start or
    a batch slower than the program's) stops at the next batch: guard.OverBudget."""
    side = side_loader(loader, workers)
    start = time.perf_counter()
    iterator = iter(side)
    try:
        next(iterator)
        first = time.perf_counter() - start
        for _ in range(_prefetched(loader, workers)):  # drained without compute: no new lead
            next(iterator)
        compute()
        synchronize(compute.replay.device_type)
        start = time.perf_counter()
        for _ in range(batches):
            require(0.0, f"a side run with {workers} worker(s)")
            next(iterator)
            compute()
        synchronize(compute.replay.device_type)
        return first, (time.perf_counter() - start) / batches
    finally:
        del iterator  # shuts the workers down


def side_run_unsupported(loader: DataLoader, min_batches: int, own_batches: bool = False) -> str:
    """Why a side loader cannot re-create the program's batches ("" when it can): what every
    data what-if needs (a sized map-style dataset of `min_batches`, batches from batch_size, or,
    for a probe that takes them (`own_batches`), from a copy of the loader's own batch_sampler)."""
    if isinstance(loader.dataset, IterableDataset):
        return "an IterableDataset (its sharding across workers is the program's)"
    try:
        len(loader.dataset)  # type: ignore[arg-type]
    except TypeError:
        return "a dataset without a length"
    if loader.batch_size is None and not own_batches:
        return "a loader built with its own batch_sampler"
    try:
        enough = batch_count(loader) >= min_batches
    except Exception as exc:  # noqa: BLE001 - a sampler that cannot be copied or listed
        return f"a batch_sampler that cannot be copied ({type(exc).__name__})"
    return "" if enough else f"a dataset of fewer than {min_batches} batches"


def unsupported(loader: DataLoader) -> str:
    """Why the loader's worker what-if cannot run ("" when it can)."""
    if loader.num_workers:
        return "a loader that already has workers"
    return side_run_unsupported(loader, MIN_BATCHES + MIN_EXTRA_BATCHES, own_batches=True)


def _counts(loader: DataLoader) -> list[int]:
    """The worker counts timed: spread as `--try workers` spreads them (worker_counts), over
    the counts whose head start leaves MIN_BATCHES of the dataset's batches. Spread first and
    filtered after, a small dataset on a machine with many cores kept 1 worker alone (16 cores:
    1, 4 and 8, of which only 1 fits 12 batches), where 1, 2 and 3 fit."""
    total = batch_count(loader)
    fitting = [
        n
        for n in range(1, min(MAX_WORKERS, usable_cores()) + 1)
        if total - 1 - _prefetched(loader, n) >= MIN_BATCHES
    ]
    return worker_counts(max(fitting)) if fitting else []


def fewest_runs_s(loader: DataLoader, step_s: float) -> float:
    """The least this probe takes, as its floor in the plan (and a short run's budget, raised to
    it): MIN_BATCHES and a first batch at the program's step time in the side runs it cannot do
    without (the as-run side, one worker count) and in the closing as-run run, the compute's
    warm-up step, and a worker set's start. Without the closing run a load spike during the one
    as-run run decides the ratio: at load 13 on d101, 4-batch runs measured 0.20x in one
    diagnosis and no gain in the next."""
    return ((MIN_BATCHES + 1) * (FEWEST_RUNS + 1) + 1) * step_s + WORKER_START_S


def measure(
    loader: DataLoader, replay: Replay, step_s: float, rest_s: float, allowance_s: float
) -> list[WhatIfTiming]:
    """One timing per worker count that fits (at least the first); `step_s` (the measured step)
    sizes the number of batches, `rest_s` (the step without its data wait) the compute run after
    each batch. The as-run side (num_workers=0) is timed before and, where the budget leaves
    room, after the variants (drift averaged)."""
    total = batch_count(loader)
    counts = _counts(loader)
    # where the wait for data is longer than the step's compute, one worker only overlaps the
    # two and the step stays as long as a batch's fetch: the most workers are timed first, so
    # that a short run whose budget holds one count times the one that can pay (a 6-step run
    # of a sleep-bound dataset measured 1 worker at 1.1-1.4x the step, and no D101, where a
    # worker per core halves it)
    if step_s - rest_s > rest_s:
        counts.reverse()
    available = total - 1 - _prefetched(loader, max(counts))  # the first batch, the head start
    runs = len(counts) + 2
    # sized for half the allowance: a side run costs more than its batches at the program's
    # step (a first batch, a head start, load): sized for all of it, the first run took 1.34 s
    # of a 1.1 s share and the runs after it no longer fitted
    share_s = allowance_s / SIZING_MARGIN / runs
    batches = int(min(MAX_BATCHES, available, max(MIN_BATCHES, share_s / step_s)))
    # the program's own steps (num_workers=0) took step_s a batch: the fewest batches of the
    # runs the probe needs must fit before the first starts (a slow dataset's runs would take
    # the budget and more); every run's where the budget holds them
    per_batch_s = max(step_s, 1e-6)
    affordable_rounds(per_batch_s * FEWEST_RUNS, fewest=MIN_BATCHES)
    batches = min(batches, max(MIN_BATCHES, affordable_rounds(per_batch_s * runs, fewest=0)))
    compute = StepCompute(replay, rest_s)
    started = time.perf_counter()
    as_run_runs = [_fetch_while_computing(loader, 0, batches, compute)]
    longest = time.perf_counter() - started
    measured: list[tuple[int, float, float]] = []
    for workers in counts:
        # a worker count costs the longest run so far and a worker set's start (the first
        # one's is not known yet: WORKER_START_S; a start under load took 1.04 s of a 0.86 s
        # budget when nothing was added). The first count must fit (OverBudget says why not);
        # a later one is left out where it does not: on a short run, one count measured is a
        # measurement where none was
        predicted = longest + (0.0 if measured else WORKER_START_S)
        if measured and affordable_rounds(predicted, fewest=0) < 1:
            break
        affordable_rounds(predicted, fewest=1)
        started = time.perf_counter()
        try:
            measured.append((workers, *_fetch_while_computing(loader, workers, batches, compute)))
        except OverBudget:
            if not measured:
                raise
            break  # a later count ran past the budget: the ones timed stand
        longest = max(longest, time.perf_counter() - started)
    # the closing as-run run, where the budget leaves room: under load the first side run took
    # 0.28 s of a 0.52 s allowance, and the runs after it did not fit where the worker counts
    # alone would have
    if affordable_rounds(longest, fewest=0) >= 1:
        with contextlib.suppress(OverBudget):  # the opening as-run run stands alone then
            as_run_runs.append(_fetch_while_computing(loader, 0, batches, compute))
    as_run = sum(per_batch for _, per_batch in as_run_runs) / len(as_run_runs)
    return [
        WhatIfTiming(
            name="data.workers",
            unit="training step",
            as_run_s=as_run,
            alternative_s=per_batch,
            repeats=batches,
            setting=f"num_workers={n}",
            startup_s=first,
        )
        for n, first, per_batch in measured
    ]
