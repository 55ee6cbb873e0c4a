"""What-if: a training DataLoader over in-memory tensors as the program ran it (each sample
indexed, then collated into a batch) vs the whole batch indexed at once (a `BatchSampler` passed
as the sampler with `batch_size=None`, so `dataset[list_of_indices]` builds the batch: rule D108's
fix). Both fetch the same batches of a private copy of the dataset in the training process, in
interleaved rounds; the batched side must return the very batch the per-sample side builds, or
the dataset does not support it and nothing is claimed."""

from __future__ import annotations

from typing import Any

import torch
from torch.utils.data import BatchSampler, DataLoader, SequentialSampler

from torchdoctor.diagnose.observations import LoaderObservation, WhatIfTiming
from torchdoctor.diagnose.whatif.data import side_loader, side_run_unsupported
from torchdoctor.diagnose.whatif.guard import (
    MIN_ROUNDS,
    clock_name,
    compute_clock,
    interleaved_medians,
)

BATCHES = 8  # per timed call: one call is a few milliseconds on a small model's loader


def unsupported(loader: DataLoader) -> str:
    """Why the loader's batched fetch cannot be timed ("" when it can)."""
    if loader.num_workers:
        return "a loader with workers"
    return side_run_unsupported(loader, 2)


def _batched_loader(loader: DataLoader) -> DataLoader:
    dataset: Any = side_loader(loader, 0).dataset  # its own private copy, sized
    sampler = BatchSampler(SequentialSampler(dataset), loader.batch_size or 1, drop_last=False)
    return DataLoader(dataset, sampler=sampler, batch_size=None)


def same_batch(a: Any, b: Any) -> bool:
    """The two batches hold equal tensors in the same structure (tuples and lists alike)."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (
            isinstance(a, torch.Tensor)
            and isinstance(b, torch.Tensor)
            and a.shape == b.shape
            and a.dtype == b.dtype
            and torch.equal(a, b)
        )
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(same_batch(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_batch(a[k], b[k]) for k in a)
    return False


def fewest_rounds_s(observation: LoaderObservation) -> float:
    """The least this probe takes on a loader: its warm-up and fewest rounds of BATCHES batches
    fetched per sample, at the wait per batch the program's run showed (the batched side is
    the faster one where the fix helps). Its first warm-up cannot be stopped once begun: 0.25 s
    of a 0.31 s budget on the planted D108 script."""
    if not observation.batches:
        return 0.0
    per_batch = observation.wait_s / observation.batches
    size = observation.batch_size or 1
    batches = max(1, min(BATCHES, (observation.dataset_len or BATCHES * size) // size))
    return (MIN_ROUNDS + 1) * batches * per_batch


def _fetch(loader: DataLoader, batches: int) -> None:
    iterator = iter(loader)
    for _ in range(batches):
        next(iterator)


def measure(loader: DataLoader, allowance_s: float) -> list[WhatIfTiming]:
    """Seconds per batch as run vs indexed whole, or nothing when the dataset cannot return the
    same batch for a list of indices."""
    per_sample, batched = side_loader(loader, 0), _batched_loader(loader)
    try:
        same = same_batch(next(iter(per_sample)), next(iter(batched)))
    except Exception:  # __getitem__ does not take a list of indices
        same = False
    if not same:
        return []
    length = len(per_sample.dataset)  # type: ignore[arg-type]
    batches = max(1, min(BATCHES, length // (loader.batch_size or 1)))
    medians, rounds = interleaved_medians(
        {
            "as run": lambda: _fetch(per_sample, batches),
            "batched": lambda: _fetch(batched, batches),
        },
        "cpu",
        allowance_s,
    )
    return [
        WhatIfTiming(
            name="data.batched_fetch",
            unit="batch",
            as_run_s=medians["as run"] / batches,
            alternative_s=medians["batched"] / batches,
            repeats=rounds,
            setting="a BatchSampler as sampler, batch_size=None",
            clock=clock_name(compute_clock("cpu")),
        )
    ]
