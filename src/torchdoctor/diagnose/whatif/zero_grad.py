"""What-if: `zero_grad(set_to_none=False)` as the program called it vs `set_to_none=True`, each
with the forward and backward that follow, on the replay's copy of the model and its real batch
(rule D220).

Both sides are timed with the backward because the change gives back more than the fill: with
zeros in place, the backward adds every new gradient into them (a second pass over memory the
size of the model); with None it hands the new gradient over. The fill alone, the time inside the
program's zero_grad, was 0.4-0.5x of what `--try set_to_none` gained on two planted scripts
(calibration round 10). Where the program ran its steps under a torch.profiler, both sides run
under one with its settings: the profiler's cost per op is part of what the fill's ops cost there.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import torch

from torchdoctor.diagnose.observations import WhatIfTiming
from torchdoctor.diagnose.probes.base import first_tensor
from torchdoctor.diagnose.whatif.guard import clock_name, compute_clock, interleaved_medians
from torchdoctor.diagnose.whatif.replay import Replay


def _step(replay: Replay, clearing: torch.optim.Optimizer, set_to_none: bool):
    """zero_grad (torch's own, on an optimizer over the copy's parameters) and then forward and
    backward: a call finds the gradients the previous call's backward left, as a step does."""

    def run() -> None:
        clearing.zero_grad(set_to_none=set_to_none)
        output = first_tensor(replay.forward())
        if output is not None and output.requires_grad and output.is_floating_point():
            output.float().mean().backward()

    return run


def measure_set_to_none(
    replay: Replay, allowance_s: float, foreach: bool | None = None, profiler: dict | None = None
) -> list[WhatIfTiming]:
    """One timing: zero_grad(set_to_none=False), forward and backward vs the same with
    set_to_none=True. `foreach`: the program's optimizer's setting (torch's zero_grad fills the
    gradients tensor by tensor or in one foreach call by it). `profiler`: the arguments of the
    torch.profiler.profile the program ran its steps under (both sides are then timed under one).
    The copy's gradients are dropped afterwards."""
    params = [p for p in replay.model.parameters() if p.requires_grad]
    if not params:
        return []
    # an optimizer only for its zero_grad: the program's call, Python and profiler record included
    clearing = torch.optim.SGD(params, lr=0.0, foreach=foreach)
    variants: dict[str, Callable[[], object]] = {
        "as run": _step(replay, clearing, False),
        "set_to_none": _step(replay, clearing, True),
    }
    clock = compute_clock(replay.device_type)
    recording: contextlib.AbstractContextManager = contextlib.nullcontext()
    if profiler is not None:
        from torchdoctor.diagnose.whatif.profiler import profiling

        recording = profiling(profiler)
    try:
        with recording:
            medians, rounds = interleaved_medians(variants, replay.device_type, allowance_s, clock)
    finally:
        for parameter in params:
            parameter.grad = None
    under = " under the program's torch.profiler" if profiler is not None else ""
    return [
        WhatIfTiming(
            name="zero_grad.set_to_none",
            unit="zero_grad, forward and backward",
            as_run_s=medians["as run"],
            alternative_s=medians["set_to_none"],
            repeats=rounds,
            setting="zero_grad(set_to_none=True)" + under,
            clock=clock_name(clock),
        )
    ]
