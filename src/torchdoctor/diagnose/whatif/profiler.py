"""What-if: forward and backward of a copy of the model on its real batch, and a step of a clone
of its optimizer, inside a torch.profiler.profile with the program's own settings (as the
program ran) vs without one.

A profiler cannot be entered per call (its start and its teardown, which processes the events,
cost far more than a step): each side is timed over a block of calls, the profiler recording the
whole block as the program's did its steps, in the order on, off, off, on, on, off, so a
drift in the machine's load hits both alike. Skipped while any profiler is recording (one at a time)."""

from __future__ import annotations

import contextlib
import statistics
from collections.abc import Callable

import torch

from torchdoctor.diagnose.observations import WhatIfTiming
from torchdoctor.diagnose.probes.profiler import _without_kineto_noise
from torchdoctor.diagnose.whatif.guard import compute_clock, timed
from torchdoctor.diagnose.whatif.optimizer import clone_optimizer
from torchdoctor.diagnose.whatif.replay import Replay

MIN_CALLS, MAX_CALLS = 3, 10  # timed calls per block
# blocks with the profiler (True) and without, alternated so a load change hits both alike
ORDER = (True, False, False, True, True, False)


@contextlib.contextmanager
def _profiling(settings: dict):
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
    context = _profiling(settings) if settings is not None else contextlib.nullcontext()
    with context:
        work()
        clock = compute_clock(device_type)  # CPU time on one CPU thread, the profiler's included
        return [timed(work, device_type, clock) for _ in range(calls)]


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
    if torch.autograd._profiler_enabled():
        raise RuntimeError("a profiler is still recording (one at a time)")
    settings = profiler_arguments(options, replay.device_type)
    work, unit = _training_work(replay, optimizer)
    device = replay.device_type
    first = _block(work, device, 1, settings) + _block(work, device, 1, None)  # warm-up
    per_pair = max(sum(first), 1e-6)
    calls = int(max(MIN_CALLS, min(MAX_CALLS, allowance_s / (len(ORDER) / 2 * per_pair))))
    on: list[float] = []
    off: list[float] = []
    for profiled in ORDER:
        (on if profiled else off).extend(
            _block(work, device, calls, settings if profiled else None)
        )
    named = ", ".join(f"{name}=True" for name in sorted(settings) if name != "activities")
    return [
        WhatIfTiming(
            name="profiler.off",
            unit=unit,
            as_run_s=statistics.median(on),
            alternative_s=statistics.median(off),
            repeats=len(on),
            setting="no torch.profiler.profile" + (f" (as run: {named})" if named else ""),
        )
    ]
