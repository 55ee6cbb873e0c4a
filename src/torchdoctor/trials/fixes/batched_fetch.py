"""Fetch whole batches with one indexing call (rule D108's fix).

A DataLoader with a `batch_size` calls `dataset[i]` once per sample and stacks the samples back
into a batch. A dataset that takes a list of indices (a `TensorDataset`, tensors indexed by a
list) builds the same batch in one call: the fix passes a `BatchSampler` over the loader's own
sampler (shuffled or not, its generator, its `drop_last`) as the `sampler`, with
`batch_size=None`. Same indices in the same order, the same random draws (the samplers draw
exactly as the DataLoader's own would).

Only where it is sound: a map-style dataset in the training process (`num_workers=0`) with the
default collate, whose first batch fetched whole equals the batch the loader builds sample by
sample (checked once at construction, the program's random streams put back afterwards). A
loader built with its own `batch_sampler` keeps its batches: it becomes the sampler. Batches come
as the default collate gives them (tuples as lists), so unpacking them is unchanged.
"""

from __future__ import annotations

from typing import Any

from torch.utils.data import (
    BatchSampler,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    default_collate,
    default_convert,
)

from torchdoctor.diagnose.rules._loaders import in_memory
from torchdoctor.diagnose.whatif.batched_fetch import same_batch
from torchdoctor.diagnose.whatif.data import _private_copy as private_copy
from torchdoctor.diagnose.whatif.guard import program_state_kept
from torchdoctor.techniques import finding_codes_for_fix
from torchdoctor.trials.fixes._common import loaders

NAME = "batched_fetch"
SUMMARY = "DataLoader(dataset, sampler=BatchSampler(<its sampler>, batch_size), batch_size=None)"
TOLERANCE = 1e-6
TOLERANCE_REASON = "the same batches in the same order: only how each batch is indexed changes"
FINDING_CODES = finding_codes_for_fix(NAME)  # from the technique registry
# what the fix can shorten (`--try auto` skips it when these take little of the run)
SHORTENS = ("data",)
PERMANENT = (
    "sampler = BatchSampler(RandomSampler(dataset), batch_size=256, drop_last=False)\n"
    "loader = DataLoader(dataset, sampler=sampler, batch_size=None)"
)


def applies_to(run) -> bool:
    return any(
        loader.role != "eval" and loader.num_workers == 0 and in_memory(run, loader)
        for loader in loaders(run)
    )


def _first_batch_same(dataset: Any, batch_size: int) -> bool:
    """The dataset indexed with the first batch's indices returns the batch the default collate
    builds from its samples. Each side indexes its own copy of the dataset (its own generators
    copied from the same state) and the global random streams are put back after both: the check
    draws nothing from the program's streams, and a dataset that draws random numbers returns
    another batch, so it is left alone."""
    try:
        indices = list(range(min(batch_size, len(dataset))))
        with program_state_kept():
            one_by_one, whole_batch = private_copy(dataset), private_copy(dataset)
            per_sample = default_collate([one_by_one[i] for i in indices])
            whole = default_convert(whole_batch[indices])
    except Exception:  # no len(), or __getitem__ does not take a list of indices
        return False
    return bool(indices) and same_batch(per_sample, whole)


def batched_kwargs(kwargs: dict) -> dict | None:
    """The DataLoader arguments fetching whole batches, or None where the fix does not apply."""
    dataset = kwargs.get("dataset")
    if (
        dataset is None
        or isinstance(dataset, IterableDataset)
        or kwargs.get("num_workers", 0)
        or kwargs.get("collate_fn") is not None  # written for a list of samples
    ):
        return None
    batch_sampler = kwargs.get("batch_sampler")
    if batch_sampler is not None:
        sampler, batch_size = batch_sampler, getattr(batch_sampler, "batch_size", None)
    else:
        batch_size = kwargs.get("batch_size", 1)
        if batch_size is None or isinstance(kwargs.get("sampler"), BatchSampler):
            return None  # already fetched whole
        indices = kwargs.get("sampler")
        if indices is None:
            indices = (
                RandomSampler(dataset, generator=kwargs.get("generator"))
                if kwargs.get("shuffle")
                else SequentialSampler(dataset)
            )
        sampler = BatchSampler(indices, batch_size, bool(kwargs.get("drop_last", False)))
    if not isinstance(batch_size, int) or not _first_batch_same(dataset, batch_size):
        return None
    rewritten = {k: v for k, v in kwargs.items() if k not in ("shuffle", "batch_sampler")}
    rewritten.update(sampler=sampler, batch_size=None, drop_last=False)
    return rewritten


def apply(hooks) -> None:
    def rewrite(kwargs: dict) -> dict:
        batched = batched_kwargs(kwargs)
        if batched is None:
            return kwargs
        hooks.mark_used(NAME)
        return batched

    hooks.loader_kwargs.append(rewrite)
