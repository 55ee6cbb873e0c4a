"""How many steps a trial times so that its numbers are on the diagnosis's scale: whole cycles.

The diagnosis states savings as a share of the run's time (training steps plus the evaluation,
checkpoints and epoch start-up between them). A trial's step time runs from one step's end to
the next (trials.recorder), so work between steps lands in the step after it; a window of whole
cycles (one epoch of the training loader, or the period of the evaluation the diagnosis saw)
holds each per-cycle cost exactly once per cycle, and baseline / variant is then the ratio of run
times. Twenty steps of a 32-step epoch would hold no evaluation at all: `--try inference_mode`
could not show what it gains.

The cycle comes from the diagnosis (torch-free): the training loader's length, else the spacing
of the steps after which evaluation ran. Steps are rounded up to whole cycles only when the
diagnosis saw work once a cycle (evaluation, loader workers started each epoch). A cycle whose
runs would take longer than CYCLE_BUDGET_S per trial run is not stretched to; the report says so.

A window may also be asked to last at least `min_seconds` (the CLI and the calibration bench ask
for MIN_WINDOW_S): ten 20 ms steps are 0.2 s, where one preemption or collection moves the mean by
tens of percent, while the trial process takes seconds to start either way. The steps are then
stretched to that time, at the diagnosis's seconds per step, in whole cycles where cycles count;
a script that ends sooner is measured to its end.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

CYCLE_BUDGET_S = 30.0  # wall seconds one trial run may spend on its measured window
MIN_WINDOW_S = 2.0  # measured seconds per trial run that make a mean step time steady
MAX_CYCLE_STEPS = 2000


@dataclass
class Window:
    steps: int  # measured steps per trial run
    cycle_steps: int | None  # steps in one cycle of the program's loop (None: not known)
    note: str  # one line for the report: what the window covers


def cycle_steps(run) -> int | None:
    """Steps in one cycle of the program's loop: an epoch of the training loader, else the
    spacing of evaluations; None when neither is known."""
    if run is None:
        return None
    for loader in run.loaders:
        if loader.role == "train" and loader.dataset_len and loader.batch_size:
            if not loader.iterable_dataset:
                return max(1, math.ceil(loader.dataset_len / loader.batch_size))
    evaluated = [step.index for step in run.steps if step.evaluation_s > 0]
    gaps = [b - a for a, b in zip(evaluated, evaluated[1:]) if b > a]
    if gaps:
        return max(1, int(statistics.median(gaps)))
    return None


def seconds_per_step(run) -> float | None:
    """Mean wall seconds per measured step, evaluation cut out of the steps put back."""
    steps = run.steps if run is not None else []
    if not steps:
        return None
    return sum(step.wall_s + step.evaluation_s for step in steps) / len(steps)


def per_cycle_work(run) -> bool:
    """Did the diagnosis see work that runs once a cycle: evaluation, or loader workers that
    start again each epoch? Without it every step is alike and any window is the cycle's."""
    if run is None:
        return False
    if run.evaluation.seconds > 0 or any(step.evaluation_s > 0 for step in run.steps):
        return True
    return any(loader.num_workers > 0 and not loader.persistent_workers for loader in run.loaders)


def trial_window(requested: int, run, min_seconds: float = 0.0) -> Window:
    """The measured steps per trial run: `requested`, stretched to last `min_seconds` at the
    diagnosis's seconds per step, rounded up to whole cycles when the diagnosis saw per-cycle
    work, knows the cycle, and they fit in CYCLE_BUDGET_S."""
    per_step = seconds_per_step(run)
    wanted = _stretched(requested, per_step, min_seconds)
    stretch = (
        f" (stretched from {requested} to last {min_seconds:g} s)" if wanted > requested else ""
    )
    cycle = cycle_steps(run)
    if cycle is None:
        return Window(wanted, None, f"{wanted} steps{stretch} (no cycle of known length)")
    if not per_cycle_work(run):
        return Window(
            wanted, cycle, f"{wanted} steps{stretch} (no evaluation or epoch start-up seen)"
        )
    whole = cycle * math.ceil(wanted / cycle)
    if whole > MAX_CYCLE_STEPS or (per_step is not None and whole * per_step > CYCLE_BUDGET_S):
        return Window(
            wanted,
            cycle,
            f"{wanted} steps{stretch}: a whole cycle of {cycle} steps would take more than "
            f"{CYCLE_BUDGET_S:g} s a run, so per-cycle work (evaluation, epoch start) is only "
            "partly in these numbers",
        )
    cycles = whole // cycle
    return Window(
        whole,
        cycle,
        f"{whole} steps = {cycles} whole cycle{'s' if cycles > 1 else ''} of {cycle} steps"
        f"{stretch} (evaluation and epoch boundaries included, as in the diagnosis's savings)",
    )


def _stretched(requested: int, per_step: float | None, min_seconds: float) -> int:
    """`requested`, or more steps where those take less than `min_seconds` (at most
    MAX_CYCLE_STEPS, and never past CYCLE_BUDGET_S of measured time)."""
    if not per_step or min_seconds <= 0:
        return requested
    seconds = min(min_seconds, CYCLE_BUDGET_S)
    return max(requested, min(MAX_CYCLE_STEPS, math.ceil(seconds / per_step - 1e-9)))
