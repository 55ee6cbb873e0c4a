"""Everything the Trainer does differently when it is one of several ranks, behind one object.

In a single process every method here is a cheap no-op (or returns its input), so the loop calls
them unconditionally and reads the same in both cases. Under torchrun:

- the device is cuda:LOCAL_RANK (CUDA) and the model gets SyncBatchNorm + DDP;
- gradients are all-reduced only on the last micro-batch of an accumulation window (`no_sync`
  on the others: the sum of the window's gradients is reduced once, not `accumulate` times);
- metrics are summed over ranks, so the epoch table describes the global batch;
- checkpoints are written by rank 0 only, and every rank learns whether that worked before
  going on (a barrier that also carries the error);
- "checkpoint every N seconds" is decided by rank 0's clock and broadcast, because ranks
  deciding from their own clocks could disagree and then deadlock in the save's collectives.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import time
from collections.abc import Callable

from torch import nn

from torchdoctor.errors import UsageError
from torchdoctor.trainer import distributed

# EpochMeter fields that are sums over samples (the rest, e.g. the gradient norm, is the same on
# every rank because DDP has already averaged the gradients)
METER_SUMS = ("loss_sum", "correct", "samples")


class RankCoordinator:
    def __init__(self, config, setup):
        self.config = config
        env = distributed.detect()
        if env.is_distributed:
            setup = dataclasses.replace(setup, device=distributed.rank_device(env, setup.device))
            env = distributed.setup(env, setup.device)
            distributed.check_agreement(config.to_dict(), env, "the trainer settings")
        self.env = env
        self.setup = setup
        self.ddp: nn.parallel.DistributedDataParallel | None = None
        self._last_save = time.monotonic()

    @property
    def is_main(self) -> bool:
        return self.env.is_main

    def wrap_model(self, model: nn.Module) -> tuple[nn.Module, nn.Module]:
        """(the module to save and optimize, the module to call): the same module in one process."""
        wrapped = distributed.prepare_model(model, self.env, self.setup.device)
        if isinstance(wrapped, nn.parallel.DistributedDataParallel):
            self.ddp = wrapped
        return distributed.unwrap(wrapped), wrapped

    def gradient_sync(self, last_in_window: bool):
        """Context for one micro-batch's forward+backward: skip DDP's all-reduce unless last."""
        if self.ddp is None or last_in_window:
            return contextlib.nullcontext()
        return self.ddp.no_sync()

    def checkpoint_due(self, global_step: int) -> bool:
        every_steps = self.config.checkpoint_every_steps
        every_seconds = self.config.checkpoint_every_seconds
        if every_steps and global_step % every_steps == 0:
            return True
        if not every_seconds:
            return False
        due = time.monotonic() - self._last_save >= every_seconds
        return bool(distributed.broadcast_object(due, self.env)) if self.env.is_distributed else due

    def save(self, write: Callable[[], object]) -> None:
        """Run `write` on rank 0; every rank raises if it failed (CheckpointError's message)."""
        distributed.run_on_main(write, self.env)
        self._last_save = time.monotonic()

    def checkpoint_meter_state(self, state: dict | None) -> dict | None:
        """A checkpoint stores the epoch's sums over all ranks; on resume rank 0 alone holds them."""
        if state is None:
            return None
        return distributed.reduce_sums(state, METER_SUMS, self.env)

    def resumed_meter_state(self, state: dict | None) -> dict | None:
        return state if self.env.is_main else None

    def check_resume(self, saved_world_size: int | None, path) -> None:
        if saved_world_size not in (None, self.env.world_size):
            raise UsageError(
                f"cannot resume from {path}: it was written by {saved_world_size} rank(s), this run "
                f"has {self.env.world_size}; resume with the same number of processes"
            )

    def global_meter(self, meter):
        """A copy of `meter` whose sums cover every rank (the original keeps this rank's sums)."""
        if not self.env.is_distributed:
            return meter
        total = copy.copy(meter)
        for name in METER_SUMS:
            value = getattr(meter, name)
            reduced = distributed.all_reduce_sum(value, self.env)
            setattr(total, name, type(value)(reduced) if isinstance(value, int) else reduced)
        return total

    def global_count(self, count: int) -> int:
        return (
            int(distributed.all_reduce_sum(count, self.env)) if self.env.is_distributed else count
        )
