"""Progress of the trial runs on a terminal: which configuration runs, how many runs are left, and
the time remaining (from the runs done so far). Nothing with --quiet or when output is piped."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from torchdoctor.console import make_console, progress_enabled


@contextmanager
def trial_progress(quiet: bool) -> Iterator[Callable[[str, int, int], None] | None]:
    """A `progress(config, runs_done, runs_total)` callback for `run_trials`, or None."""
    if not progress_enabled(quiet):
        yield None
        return
    columns = (
        TextColumn("--try: {task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("runs, ETA"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=make_console(stderr=True), transient=True) as bar:
        task = bar.add_task("starting", total=None)

        def update(config: str, done: int, total: int) -> None:
            label = f"{config} (trial run {done + 1} of {total})" if done < total else "done"
            bar.update(task, description=label, completed=done, total=total)

        yield update
