"""What-if: forward and backward of a copy of the model on its real batch, and a step of a clone
of its optimizer, inside a torch.profiler.profile with the program's own settings (as the
program ran) vs without one.

A profiler cannot be entered per call (its start and its teardown, which processes the events,
cost far more than a step): each side is timed over a block of calls, the profiler recording the
whole block as the program's did its steps, in pairs of blocks (on, off; off, on; ...) whose
ratios give the stated one (their median), so a drift in the machine's load hits both alike;
where the first pairs disagree (one finds the profiler costly, another free), MORE_PAIRS more
are timed if they fit, and the lowest and highest pair are then left out of where they lie.
The first pair of blocks (MIN_CALLS calls each) sizes the others: fewer calls where the
what-if budget or the probe's allowance is short (the profiler's start and stop counted), never
under MIN_CALLS (the one probe that may go over its budget, by those few calls: a first pair
alone was too noisy). Times are the process's CPU time on a CPU with one thread (guard's
compute_clock). Skipped while any profiler is recording (one at a time)."""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import Callable

import torch

from torchdoctor.diagnose.observations import WhatIfTiming
from torchdoctor.diagnose.probes.profiler import _without_kineto_noise
from torchdoctor.diagnose.whatif.guard import budget_left, clock_name, compute_clock, timed
from torchdoctor.diagnose.whatif.optimizer import clone_optimizer
from torchdoctor.diagnose.whatif.replay import Replay

MIN_CALLS, MAX_CALLS = 3, 10  # timed calls per block
PAIRS = 3  # pairs of blocks, one with the profiler and one without, timed back to back
# pairs added where the first PAIRS disagree (one on each side of 1) and the allowance has room:
# d212 at load 3 had pairs of 0.41x, 0.7x and 1.36x and stated the estimate's 90% where
# `--try profiler_off` gained 28-38%; one pair a block slowed by another process decided nothing
MORE_PAIRS = 2


@contextlib.contextmanager
def profiling(settings: dict):
    """A torch.profiler.profile with `settings` recording meanwhile (kineto's noise hidden)."""
    profiler = torch.profiler.profile(**settings)
    with _without_kineto_noise():
        profiler.start()
    try:
        yield
    finally:
        with _without_kineto_noise():
            profiler.stop()


def _block(work: Callable[[], None], device_type: str, calls: int, settings: dict | None):
    """`calls` timed calls after an untimed one (a profiler's first events, or the first call
    after one stopped, pay set-up costs no step of a long profiled run pays)."""
    context = profiling(settings) if settings is not None else contextlib.nullcontext()
    with context:
        work()
        return [timed(work, device_type, compute_clock(device_type)) for _ in range(calls)]


def _training_work(replay: Replay, optimizer: torch.optim.Optimizer | None):
    """Forward and backward of the copy, then a step of a clone of the optimizer (its own
    parameters, gradients and state) when there is one: (work, unit)."""
    if optimizer is None:
        return replay.forward_backward, "forward and backward"
    step = clone_optimizer(optimizer).step

    def work() -> None:
        replay.forward_backward()
        step()

    return work, "forward, backward and optimizer step"


def profiler_arguments(options: list[str], device_type: str) -> dict:
    """torch.profiler.profile's arguments for the options the program turned on."""
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device_type == "cuda" and torch.cuda.is_available():
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    known = ("record_shapes", "profile_memory", "with_stack", "with_flops", "with_modules")
    return {"activities": activities, **{name: True for name in options if name in known}}


def measure_profiler(
    replay: Replay,
    options: list[str],
    allowance_s: float,
    optimizer: torch.optim.Optimizer | None = None,
) -> list[WhatIfTiming]:
    """The work with the program's profiler on vs off, in pairs of blocks (the pair's order
    alternating, so a load drift hits both alike): the stated ratio is the median over the pairs
    of the on block's median call over the off block's. The two sides' medians over all blocks,
    taken apart, swung 0.73-0.98 between diagnoses of one script at load 12 (blocks of the same
    side differed by 2x): a pair's blocks run back to back, one pair's ratio is what the load
    hits least."""
    if torch.autograd._profiler_enabled():
        raise RuntimeError("a profiler is still recording (one at a time)")
    settings = profiler_arguments(options, replay.device_type)
    work, unit = _training_work(replay, optimizer)
    device = replay.device_type
    # the first pair of blocks, MIN_CALLS calls each, is timed like the rest and also sizes
    # them: a profiler's start and stop costs more than a step, so no separate warm-up
    started = time.perf_counter()
    pairs: list[tuple[list[float], list[float]]] = [(_block(work, device, MIN_CALLS, settings), [])]
    profiled_s = time.perf_counter() - started
    pairs[0][1].extend(_block(work, device, MIN_CALLS, None))
    off_s = (time.perf_counter() - started - profiled_s) / (MIN_CALLS + 1)  # wall, per call
    on, off = pairs[0]
    on_s = off_s * statistics.median(on) / max(statistics.median(off), 1e-9)
    start_stop_s = max(0.0, profiled_s - (MIN_CALLS + 1) * on_s)
    # fewer calls where the budget is short, never under MIN_CALLS: a first pair alone, three
    # calls a side, swung both ways on a loaded machine (the profiler "1.2x faster")
    left = allowance_s - (time.perf_counter() - started)
    fitting = min(
        _fitting(left, start_stop_s, on_s + off_s), _affordable(start_stop_s, on_s + off_s)
    )
    calls = max(MIN_CALLS, min(MAX_CALLS, fitting))
    pair_s = start_stop_s + (calls + 1) * (on_s + off_s)  # a pair of blocks, in wall time
    for index in range(1, PAIRS + MORE_PAIRS):
        if index == PAIRS and (  # the more pairs all or none: of four, one would be left out
            _decided(_ratios(pairs)) or not _room(started, allowance_s, MORE_PAIRS * pair_s)
        ):
            break
        first_on = index % 2 == 0  # on-off, off-on, on-off: ABBA over the pairs
        a = _block(work, device, calls, settings if first_on else None)
        b = _block(work, device, calls, None if first_on else settings)
        pairs.append((a, b) if first_on else (b, a))
    ratios = _ratios(pairs)
    ratio = statistics.median(ratios)
    as_run_s = statistics.median([t for on, _ in pairs for t in on])
    named = ", ".join(f"{name}=True" for name in sorted(settings) if name != "activities")
    return [
        WhatIfTiming(
            name="profiler.off",
            unit=unit,
            as_run_s=as_run_s,
            alternative_s=as_run_s * ratio,  # the pairs' median ratio, on the as-run median
            repeats=sum(len(on) for on, _ in pairs),
            setting="no torch.profiler.profile" + (f" (as run: {named})" if named else ""),
            clock=clock_name(compute_clock(device)),
            pair_ratios=_pairs_range(ratios),
        )
    ]


def _ratios(pairs: list[tuple[list[float], list[float]]]) -> list[float]:
    """Each pair's ratio: its off block's median call over its on block's."""
    return [statistics.median(off) / max(statistics.median(on), 1e-12) for on, off in pairs]


def _pairs_range(ratios: list[float]) -> tuple[float, float]:
    """Where the pairs' ratios lie: their lowest and highest; with more than PAIRS pairs (added
    because the first ones disagreed) the lowest and highest are left out, so that one pair on
    the other side of 1 among five (a block another process slowed) does not undo four that
    agree, while two do."""
    ordered = sorted(ratios)
    if len(ordered) > PAIRS:
        ordered = ordered[1:-1]
    return ordered[0], ordered[-1]


def _decided(ratios: list[float]) -> bool:
    """The pairs agree on a side of 1 (the profiler costly, or free)."""
    low, high = _pairs_range(ratios)
    return not low < 1 <= high


def _room(started: float, allowance_s: float, seconds: float) -> bool:
    """`seconds` more fit in the probe's allowance and in what is left of the what-if budget."""
    left = budget_left()
    within = allowance_s - (time.perf_counter() - started)
    return seconds <= within and (left is None or seconds <= left)


def _fitting(seconds: float, start_stop_s: float, pair_s: float) -> int:
    """Calls per block that let the pairs after the first (each block its calls and an untimed
    one; the profiled ones also a profiler's start and stop) fit in `seconds`, the MORE_PAIRS
    counted: sized for the first PAIRS alone, they filled the allowance and none was ever added
    (d212 at load 12: pairs of 0.48x-1.29x, 10 calls a block). `pair_s`: a call with and one
    without the profiler."""
    pairs = PAIRS - 1 + MORE_PAIRS
    return int((seconds - pairs * start_stop_s) / (pairs * max(pair_s, 1e-6))) - 1


def _affordable(start_stop_s: float, pair_s: float) -> int:
    """Calls per block that fit in what is left of the what-if budget (MAX_CALLS without one)."""
    left = budget_left()
    return MAX_CALLS if left is None else _fitting(left, start_stop_s, pair_s)
