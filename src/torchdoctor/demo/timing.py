"""The steady-state figure the table reports from a row's per-epoch wall times.

The first epoch of a row pays one-time costs (DataLoader worker start-up, allocator growth,
first-touch of the data) that later epochs do not; on a shared machine single epochs also move
by tens of percent. So a row's s/epoch is the median of its epochs after the first; the first
epoch is kept and reported separately. A row with a single epoch has no steady state: its one
epoch is all there is (the --quick size; the demo says so under the table).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Iterator


class TickOnIter:
    """A loader whose every pass (one epoch of seed 001's loop) calls `on_epoch()` first."""

    def __init__(self, loader, on_epoch: Callable[[], None]):
        self.loader, self.on_epoch = loader, on_epoch

    def __iter__(self) -> Iterator:
        self.on_epoch()
        return iter(self.loader)

    def __len__(self) -> int:
        return len(self.loader)


def steady_epochs(times: Iterable[float]) -> list[float]:
    """The epochs after the first (all of them when there is only one)."""
    times = list(times)
    return times[1:] if len(times) > 1 else times


def steady_epoch_s(times: Iterable[float]) -> float:
    return statistics.median(steady_epochs(times))


def spread(times: Iterable[float]) -> float:
    """(slowest - fastest) / median of the steady epochs: this row's own run-to-run noise."""
    steady = steady_epochs(times)
    return (max(steady) - min(steady)) / statistics.median(steady) if len(steady) > 1 else 0.0
