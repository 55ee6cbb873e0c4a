"""Per-step timestamps and DataLoader wait time during a Trainer run.

Steps end at each optimizer step (a global step post-hook, so any torch.optim optimizer counts);
data wait is the time spent inside the DataLoader iterator's `__next__`. Throughput and data-wait
share are computed after `warmup` steps, so worker start-up and first-step costs are excluded.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from torch.optim.optimizer import register_optimizer_step_post_hook
from torch.utils.data.dataloader import _BaseDataLoaderIter

from torchdoctor.intercept.patching import Patcher


@dataclass
class StepClock:
    ends: list[float] = field(default_factory=list)  # perf_counter at each step's end
    waits: list[float] = field(default_factory=list)  # data wait during each step
    _pending_wait: float = 0.0

    def __enter__(self) -> StepClock:
        self._start = time.perf_counter()
        self._handle = register_optimizer_step_post_hook(self._on_step)
        self._patcher = Patcher()
        self._patcher.replace(_BaseDataLoaderIter, "__next__", self._timed_next)
        return self

    def __exit__(self, *exc) -> None:
        self._handle.remove()
        self._patcher.restore()

    def _timed_next(self, original):
        clock = self

        def __next__(iterator):
            started = time.perf_counter()
            try:
                return original(iterator)
            finally:
                clock._pending_wait += time.perf_counter() - started

        return __next__

    def _on_step(self, optimizer, args, kwargs) -> None:
        self.ends.append(time.perf_counter())
        self.waits.append(self._pending_wait)
        self._pending_wait = 0.0

    def measured_seconds(self, warmup: int) -> float | None:
        if len(self.ends) <= warmup or warmup < 1:
            return None
        return self.ends[-1] - self.ends[warmup - 1]

    def steps_per_s(self, warmup: int) -> float | None:
        seconds = self.measured_seconds(warmup)
        return (len(self.ends) - warmup) / seconds if seconds else None

    def data_wait_share(self, warmup: int) -> float | None:
        seconds = self.measured_seconds(warmup)
        return min(1.0, sum(self.waits[warmup:]) / seconds) if seconds else None
