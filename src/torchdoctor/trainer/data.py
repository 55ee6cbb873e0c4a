"""DataLoader construction and a deterministic, resumable per-epoch order.

The order of epoch e is a pure function of (seed, e) (torchdoctor.trainer.sampler.ResumableSampler):
the shuffle and the workers' base seed draw from their own generators, never from the global RNG,
so a resumed run that restores the global RNG (dropout, augmentation) sees exactly the same
batches, and the first k batches of an epoch are skipped without being loaded.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice

import torch
from torch.utils.data import (
    BatchSampler,
    ConcatDataset,
    DataLoader,
    Dataset,
    Subset,
    TensorDataset,
)

from torchdoctor.errors import UsageError
from torchdoctor.trainer.sampler import ResumableSampler, loader_seed
from torchdoctor.trainer.setup import ResolvedSetup


@dataclass
class LoaderHandle:
    """A DataLoader plus what the loop needs to start an epoch at a given batch."""

    loader: DataLoader
    sampler: ResumableSampler | None  # None: the user passed a ready DataLoader
    batch_size: int | None
    seed: int
    rank: int = 0
    drop_last: bool = False  # the last partial batch of an epoch

    def __len__(self) -> int:
        """Batches in a full epoch."""
        if self.sampler is None:
            return len(self.loader)
        full = self.sampler.num_samples
        size = self.batch_size
        return full // size if self.drop_last else -(-full // size)

    def epoch_batches(self, epoch: int, skip_batches: int = 0) -> Iterator:
        if self.sampler is None:
            # A user DataLoader: we cannot seek, so skipped batches are loaded and dropped, and
            # resumed order is only exact if the user's loader is deterministic per epoch.
            set_epoch = getattr(self.loader.sampler, "set_epoch", None)
            if set_epoch is not None:
                set_epoch(epoch)
            return islice(iter(self.loader), skip_batches, None)
        self.sampler.set_epoch(epoch)
        self.sampler.skip(skip_batches * self.batch_size)
        # Worker base seeds come from the loader's own generator, not the global RNG, so
        # starting an iterator does not perturb the RNG state that a checkpoint captured.
        self.loader.generator.manual_seed(loader_seed(self.seed, epoch, self.rank))
        return iter(self.loader)


def in_memory_tensors(data) -> bool:
    """A TensorDataset, or torch's wrappers (random_split's Subset, ConcatDataset) over them:
    each sample is one indexing op, cheaper than a worker's hand-over of the batch."""
    if isinstance(data, TensorDataset):
        return True
    if isinstance(data, Subset):
        return in_memory_tensors(data.dataset)
    if isinstance(data, ConcatDataset):
        return all(in_memory_tensors(part) for part in data.datasets)
    return False


def build_loader(
    data,
    setup: ResolvedSetup,
    batch_size: int,
    *,
    shuffle: bool,
    drop_last: bool,
    seed: int,
    rank: int = 0,
    world_size: int = 1,
    role: str = "training",  # names the data in errors: "training", "validation", ...
) -> LoaderHandle:
    """A Dataset becomes a DataLoader with every loading switch set for the device; a ready
    DataLoader is used as given (its owner chose its switches)."""
    if isinstance(data, DataLoader):
        return LoaderHandle(data, None, data.batch_size, seed)
    if not isinstance(data, Dataset) and not hasattr(data, "__getitem__"):
        raise TypeError(f"expected a Dataset or DataLoader, got {type(data).__name__}")
    if len(data) == 0:
        raise UsageError(f"the {role} data is empty")
    sampler = ResumableSampler(
        len(data), shuffle=shuffle, seed=seed, rank=rank, world_size=world_size, drop_last=drop_last
    )
    workers = 0 if setup.workers_auto and in_memory_tensors(data) else setup.workers
    extra = {}
    if workers > 0:
        extra = {
            "persistent_workers": setup.persistent_workers,
            "prefetch_factor": setup.prefetch_factor,
        }
    if workers == 0 and isinstance(data, TensorDataset):
        # Indexed with a whole batch's indices at once: one op per tensor instead of one
        # `__getitem__` per sample and a stack (D108; its share of a small step was ~25-30%).
        # The same batches in the same order.
        loader = DataLoader(
            data,
            batch_size=None,
            sampler=BatchSampler(sampler, batch_size, drop_last),
            pin_memory=setup.pin_memory,
            generator=torch.Generator(),
        )
        return LoaderHandle(loader, sampler, batch_size, seed, rank, drop_last)
    loader = DataLoader(
        data,
        batch_size=batch_size,
        sampler=sampler,
        num_workers=workers,
        pin_memory=setup.pin_memory,
        drop_last=drop_last,
        generator=torch.Generator(),
        **extra,
    )
    return LoaderHandle(loader, sampler, batch_size, seed, rank, drop_last)


def split_batch(batch) -> tuple:
    """(inputs, targets) from a batch; targets None for input-only batches (predict)."""
    if isinstance(batch, (tuple, list)):
        if len(batch) == 1:
            return batch[0], None
        return batch[0], batch[1]
    return batch, None


def batch_size_of(inputs) -> int:
    if isinstance(inputs, torch.Tensor):
        return inputs.shape[0]
    if isinstance(inputs, (tuple, list)):
        return batch_size_of(inputs[0])
    if isinstance(inputs, dict):
        return batch_size_of(next(iter(inputs.values())))
    raise TypeError(f"cannot find the batch dimension of a {type(inputs).__name__}")


def to_device(value, device: torch.device, non_blocking: bool, channels_last: bool):
    """Copy a batch (tensor, or tuple/list/dict of tensors) to the device; 4-D inputs go NHWC
    when the model is channels_last, so the first conv does not convert layouts every step."""
    if isinstance(value, torch.Tensor):
        if channels_last and value.dim() == 4:
            return value.to(device, non_blocking=non_blocking, memory_format=torch.channels_last)
        return value.to(device, non_blocking=non_blocking)
    if isinstance(value, (tuple, list)):
        return type(value)(to_device(v, device, non_blocking, channels_last) for v in value)
    if isinstance(value, dict):
        return {k: to_device(v, device, non_blocking, channels_last) for k, v in value.items()}
    return value
