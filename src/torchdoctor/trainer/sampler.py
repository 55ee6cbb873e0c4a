"""A sampler whose order is a pure function of (seed, epoch), split across ranks, resumable mid-epoch.

Data order rule (what makes N ranks equivalent to one process, and a resumed run equivalent to an
uninterrupted one):

1. The *global* order of epoch e is `torch.randperm(n, generator=manual_seed(seed + e))` (or
   `range(n)` without shuffling): the same order `torch.utils.data.DistributedSampler` uses.
2. Without `drop_last` it is padded with its own first indices up to a multiple of world_size;
   with `drop_last` it is cut down to one.
3. Rank r takes positions r, r + W, r + 2W, ... of that global order.

So at per-rank batch B, step k of rank r holds global positions r + W*j for j in [kB, (k+1)B):
over all ranks that is exactly positions [kWB, (k+1)WB), the batch a single process at batch W*B
sees at step k (up to order inside the batch). With the mean loss and DDP's gradient averaging,
the update is then the same. The one exception is the last step of an epoch when n is not a
multiple of W*B: padding repeats a few samples there (use drop_last to avoid it).

Resuming: the Trainer records how many samples of the current epoch this rank has consumed
(`state_dict(position)`); `load_state_dict` makes the next `__iter__` start there. The position
is counted by the Trainer, not by the sampler, because a DataLoader reads ahead of training.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator

import torch
from torch.utils.data import Sampler

from torchdoctor.errors import CheckpointError, UsageError


class ResumableSampler(Sampler[int]):
    def __init__(
        self,
        dataset_len: int,
        shuffle: bool = True,
        seed: int = 0,
        rank: int = 0,
        world_size: int = 1,
        drop_last: bool = False,
    ):
        if dataset_len < 1:
            raise UsageError("the training data is empty")
        if not 0 <= rank < world_size:
            raise UsageError(f"rank {rank} is outside world size {world_size}")
        self.dataset_len = dataset_len
        self.shuffle = shuffle
        self.seed = seed
        self.rank = rank
        self.world_size = world_size
        self.drop_last = drop_last
        self.epoch = 0
        self._start = 0  # where the next __iter__ begins, in this rank's samples

    @property
    def num_samples(self) -> int:
        """Samples this rank sees per epoch (the same on every rank)."""
        if self.drop_last:
            return self.dataset_len // self.world_size
        return math.ceil(self.dataset_len / self.world_size)

    def __len__(self) -> int:
        return self.num_samples - self._start

    def global_order(self, epoch: int | None = None) -> list[int]:
        """Rules 1 and 2 above: every rank's indices of `epoch`, in global order."""
        epoch = self.epoch if epoch is None else epoch
        if self.shuffle:
            generator = torch.Generator()
            generator.manual_seed(self.seed + epoch)
            order = torch.randperm(self.dataset_len, generator=generator).tolist()
        else:
            order = list(range(self.dataset_len))
        total = self.num_samples * self.world_size
        while len(order) < total:
            order += order[: total - len(order)]
        return order[:total]

    def rank_order(self, epoch: int | None = None) -> list[int]:
        return self.global_order(epoch)[self.rank :: self.world_size]

    def __iter__(self) -> Iterator[int]:
        start, self._start = self._start, 0  # a skip applies to one pass only; the next starts at 0
        return iter(self.rank_order()[start:])

    def set_epoch(self, epoch: int) -> None:
        """Select epoch `epoch`; a pending resume position survives only if the epoch is unchanged."""
        if epoch != self.epoch:
            self._start = 0
        self.epoch = epoch

    def skip(self, samples: int) -> None:
        """Start the next pass `samples` further into this rank's order of the current epoch."""
        if samples < 0:
            raise UsageError(f"cannot skip a negative number of samples ({samples})")
        self._start = min(self._start + samples, self.num_samples)

    @property
    def start_position(self) -> int:
        return self._start

    def state_dict(self, position: int) -> dict:
        """Resume state; `position` is the number of samples of this epoch this rank has trained on."""
        return {
            "seed": self.seed,
            "epoch": self.epoch,
            "position": int(position),
            "world_size": self.world_size,
            "dataset_len": self.dataset_len,
            "shuffle": self.shuffle,
        }

    def load_state_dict(self, state: dict) -> None:
        for key in ("seed", "dataset_len", "shuffle"):
            if state[key] != getattr(self, key):
                raise CheckpointError(
                    f"the checkpoint's data order has {key}={state[key]!r} but this run has "
                    f"{key}={getattr(self, key)!r}; resume with the same data and seed"
                )
        # Global positions consumed are position * old_world; the global order does not depend on
        # the world size (only its padded tail does), so resuming on another world size is exact
        # when that count splits evenly over the new ranks.
        consumed = state["position"] * state["world_size"]
        if consumed % self.world_size:
            raise CheckpointError(
                f"the checkpoint stopped after {consumed} samples of epoch {state['epoch']}, which "
                f"does not split evenly over {self.world_size} ranks; resume with "
                f"{state['world_size']} ranks"
            )
        self.epoch = state["epoch"]
        self._start = min(consumed // self.world_size, self.num_samples)


def loader_seed(seed: int, epoch: int, rank: int = 0) -> int:
    """A well-mixed 63-bit seed for (seed, epoch, rank): neighbouring inputs give unrelated seeds."""
    digest = hashlib.blake2b(f"torchdoctor:{seed}:{epoch}:{rank}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1


def loader_generator(seed: int, epoch: int, rank: int = 0) -> torch.Generator:
    """The `generator=` for an epoch's DataLoader.

    DataLoader draws its worker base seed from this generator when an iterator is created, and
    seeds worker w's `random`, `numpy` and `torch` with base_seed + w. A generator derived from
    (seed, epoch, rank) therefore gives workers seeds that repeat from run to run and differ
    across ranks, and, above all, keeps DataLoader from drawing from the global torch RNG, which
    would shift the model's own random stream (dropout) when a resumed run recreates its
    iterator mid-epoch. (A worker's RNG still restarts when a resumed run starts its workers, so
    random augmentation *inside workers* is not resumed exactly; see docs/checkpoints.md.)
    """
    generator = torch.Generator()
    generator.manual_seed(loader_seed(seed, epoch, rank))
    return generator
