"""Which loaders the data rules talk about and how much of the data wait is theirs: in-memory
datasets, heavy collate functions, several loaders zipped. Pure; no torch."""

from __future__ import annotations

from torchdoctor.diagnose.observations import LoaderObservation, RunObservation
from torchdoctor.diagnose.rules._common import (
    clamp,
    median_phase_s,
    training_loaders,
    typical_batch_size,
)
from torchdoctor.diagnose.rules._overhead import cpu_share
from torchdoctor.diagnose.rules._respawn import respawns_each_epoch

# A sample whose __getitem__ costs at most this many trivial ops is only indexed (in-memory
# tensors): worker processes cost more to hand a batch over than they save; fetching whole
# batches at once is the fix (rules D108, D109), not workers (rules D101, D102).
TRIVIAL_ITEM_RATIO = 10.0


def trivial_items(run: RunObservation, loader: LoaderObservation) -> bool:
    floor = run.compute.dispatch_overhead_s
    return (
        loader.item_s is not None
        and floor is not None
        and (loader.item_s <= TRIVIAL_ITEM_RATIO * floor)
    )


# Datasets whose samples are slices of tensors already in memory, whatever the timings say.
IN_MEMORY_DATASETS = ("TensorDataset",)


def in_memory(run: RunObservation, loader: LoaderObservation) -> bool:
    """The loader's samples are only indexed from memory: a map-style TensorDataset (or torch's
    Subset, ConcatDataset or StackDataset over TensorDatasets), or __getitem__ measured at no
    more than a few trivial ops. One test for D101, D105, D108, D109 and D110, so a loader gets
    one piece of advice (batched fetching, not workers) however noisy the machine is. An
    IterableDataset is never indexed: a batched sampler cannot apply to it."""
    if loader.iterable_dataset:
        return False
    # a Subset (random_split's, a fold's), ConcatDataset or StackDataset of TensorDatasets
    # indexes tensors too
    wrapped = loader.wrapped_dataset_types
    in_memory_type = loader.dataset_type in IN_MEMORY_DATASETS or (
        bool(wrapped) and all(name in IN_MEMORY_DATASETS for name in wrapped)
    )
    return in_memory_type or trivial_items(run, loader)


def fetches_whole_batches(loader: LoaderObservation) -> bool:
    """Automatic batching off (`batch_size=None`): each fetch is one `__getitem__` that returns
    a whole batch (a BatchSampler as the sampler: D108's fix), with no per-sample collate."""
    return loader.batch_size is None and loader.samples_per_batch == 1


# The default collate stacks a sample in one to three trivial ops' time (measured: 0.1-2.6x the
# dispatch floor per sample for 64 to 3x32x32 floats); a collate_fn well above that does work of
# its own (padding in Python, per-token loops): rule D111, and not D108's per-sample indexing.
HEAVY_COLLATE_RATIO = 50.0
# The default collate stacks a sample for less than it costs to fetch it (at least one indexing
# op per field); a collate above twice the measured __getitem__ per sample does work of its own.
# Both are timed in the same process over the same steps, so machine load cancels out.
HEAVY_COLLATE_TO_ITEM = 2.0
# A collate that stacks sample tensors copies them at memory speed, gigabytes a second; one that
# does Python work per sample (negatives drawn one by one, tokens copied into packed rows)
# returns a few hundred bytes a sample in microseconds (20 negatives drawn with random: ~5
# trivial ops' time and 10 MB/s). Below this rate (in CPU time), a collate above the default's
# most (2.6 trivial ops per sample, for the largest samples; under one for small ones) is doing
# such work: D111 at this lower ratio, while a large copy still needs HEAVY_COLLATE_RATIO.
PYTHON_COLLATE_RATIO = 3.0
PYTHON_COLLATE_BYTES_PER_S = 100e6


def heavy_collate(run: RunObservation, loader: LoaderObservation) -> bool:
    """The collate_fn does work of its own: per sample, far above the dispatch floor in CPU time
    (wall time x cpu_share, so a busy machine does not inflate it) and above the item cost."""
    floor = run.compute.dispatch_overhead_s
    batch = collated_batch(loader)
    if loader.collate_s is None or not floor or not batch:
        return False
    per_sample_s = loader.collate_s / batch
    if loader.item_s is not None and per_sample_s <= HEAVY_COLLATE_TO_ITEM * loader.item_s:
        return False
    per_sample_cpu_s = per_sample_s * cpu_share(run)
    if per_sample_cpu_s > HEAVY_COLLATE_RATIO * floor:
        return True
    copied = loader.collate_bytes  # a rate below memory speed: not a copy
    return (
        copied is not None
        and per_sample_cpu_s > PYTHON_COLLATE_RATIO * floor
        and copied < PYTHON_COLLATE_BYTES_PER_S * per_sample_cpu_s * batch
    )


def collated_batch(loader: LoaderObservation) -> float | None:
    """Samples per collated batch: the loader's batch_size, or, for a loader built with a
    batch_sampler (batch_size None), the typical count its fetches were handed."""
    return loader.batch_size or loader.samples_per_batch


def wait_share(run: RunObservation, loader: LoaderObservation) -> float:
    """This loader's share of the training loaders' data wait (1 for the only loader), so that a
    rule about one of two zipped loaders claims that loader's part of the data time only."""
    loaders = training_loaders(run)
    total = sum(ld.wait_s for ld in loaders)
    if len(loaders) <= 1 or total <= 0:
        return 1.0
    return clamp(loader.wait_s / total)


def waiting_loader(
    run: RunObservation, loaders: list[LoaderObservation]
) -> tuple[LoaderObservation, float]:
    """The loader the steps waited on longest, and its part of the steady (median) data seconds
    per step: an epoch's worker start-up (rule D103) is not a steady cost."""
    loader = max(loaders, key=lambda ld: ld.wait_s)
    return loader, median_phase_s(run, "data") * wait_share(run, loader)


# At most this many samples per batch, a worker's per-batch hand-over (pickle, queue, unpickle)
# can outweigh building the batch: rule D112's case, and not D110's (cheaper items).
SMALL_WORKER_BATCH = 16


def samples_per_handover(run: RunObservation, loader: LoaderObservation) -> float | None:
    """Samples in each batch the loader hands over: its batch_size, or for a loader built with a
    batch_sampler (batch_size None) the samples its batches held (counted in this process), else
    the batch the steps consumed where it is the only training loader. None: unknown, or no
    automatic batching (each __getitem__ returns a whole batch)."""
    if loader.batch_size is not None:
        return float(loader.batch_size)
    if loader.sampler_type == "BatchSampler" or fetches_whole_batches(loader):
        return None  # a BatchSampler as the sampler: whole batches from __getitem__
    if loader.samples_per_batch:
        return loader.samples_per_batch
    if len(training_loaders(run)) == 1:
        return typical_batch_size(run)
    return None


def small_batches_through_workers(run: RunObservation, loader: LoaderObservation) -> bool:
    """Worker processes hand over batches of a few samples from a dataset not known to be
    in-memory tensors (those are D109's) and not restarting every epoch (D103 first). An
    IterableDataset counts where the loader batches its samples (`batch_size` set): each batch
    of 4 streamed episodes crossed the worker queue as a map-style one does; one that yields
    its own batches (`batch_size=None`) is left out, its batch size not known here."""
    batch = samples_per_handover(run, loader)
    return (
        loader.num_workers > 0
        and batch is not None
        and batch <= SMALL_WORKER_BATCH
        and (not loader.iterable_dataset or loader.batch_size is not None)
        and not in_memory(run, loader)
        and not respawns_each_epoch(run, loader)
    )
