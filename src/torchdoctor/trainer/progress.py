"""The live progress bar: only on a terminal and not quiet (torchdoctor.console.progress_enabled).

Refreshing reads the running loss, which syncs with the device, so it happens at most every
`REFRESH_S` seconds rather than per step. When disabled every call is a no-op.
"""

from __future__ import annotations

import time

from torchdoctor.console import make_console, progress_enabled

REFRESH_S = 0.5


class EpochProgress:
    def __init__(self, quiet: bool, epochs: int):
        self.enabled = progress_enabled(quiet)
        self.epochs = epochs
        self._progress = None
        self._task = None
        self._next_refresh = 0.0

    def __enter__(self):
        if self.enabled:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
            )

            self._progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                TextColumn("{task.fields[loss]}"),
                console=make_console(quiet=False, stderr=True),
                transient=True,
            )
            self._progress.__enter__()
        return self

    def __exit__(self, *exc):
        if self._progress is not None:
            self._progress.__exit__(*exc)

    def start_epoch(self, epoch: int, total_batches: int, done: int) -> None:
        if self._progress is None:
            return
        if self._task is not None:
            self._progress.remove_task(self._task)
        self._task = self._progress.add_task(
            f"epoch {epoch + 1}/{self.epochs}", total=total_batches, completed=done, loss=""
        )

    def advance(self, batches: int, meter) -> None:
        if self._progress is None:
            return
        self._progress.advance(self._task, batches)
        now = time.monotonic()
        if now >= self._next_refresh:
            self._next_refresh = now + REFRESH_S
            self._progress.update(self._task, loss=f"loss {meter.running_loss():.4f}")
