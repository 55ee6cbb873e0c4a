"""What-if: the program's optimizer step as it ran vs `fused=True` (`foreach=True` where the class
has no fused kernel), timed on a clone of its parameters, gradients and state (the program's
tensors are never stepped)."""

from __future__ import annotations

import contextlib
import copy
import statistics
from collections.abc import Callable

import torch

from torchdoctor.diagnose.observations import FORWARD_BACKWARD_TIMING, WhatIfTiming
from torchdoctor.diagnose.whatif.allocator import fault_share, mixed, with_handed_back
from torchdoctor.diagnose.whatif.guard import clock_name, compute_clock, interleaved_samples

# flags of the implementation; the alternatives set one of them and clear the other
IMPLEMENTATION_FLAGS = ("foreach", "fused")
GRADIENT_FILL = 1e-3  # a parameter without a gradient gets this one (same work per element)


def clone_optimizer(
    optimizer: torch.optim.Optimizer, dtype: torch.dtype | None = None, **flags
) -> torch.optim.Optimizer:
    """A new optimizer of the same class over cloned parameters (with cloned gradients) and a
    deep copy of its state; `flags` (foreach/fused) override the implementation; `dtype` casts
    the floating-point parameters and gradients (the state follows them on loading)."""

    def cloned(tensor: torch.Tensor) -> torch.Tensor:
        copied = tensor.detach().clone()
        return copied.to(dtype) if dtype is not None and copied.is_floating_point() else copied

    groups = []
    for group in optimizer.param_groups:
        params = []
        for p in group["params"]:
            parameter = cloned(p).requires_grad_(p.requires_grad)
            grad = p.grad
            parameter.grad = (
                cloned(grad) if grad is not None else torch.full_like(parameter, GRADIENT_FILL)
            )
            params.append(parameter)
        settings = {k: v for k, v in group.items() if k not in ("params", *IMPLEMENTATION_FLAGS)}
        groups.append({"params": params, **settings})
    clone = type(optimizer)(groups, **flags)
    clone.load_state_dict(copy.deepcopy(optimizer.state_dict()))
    for group, original in zip(clone.param_groups, optimizer.param_groups, strict=True):
        for flag in IMPLEMENTATION_FLAGS:  # load_state_dict brought the program's flags back
            if flag in flags:
                group[flag] = flags[flag]
            elif flag in original:
                group[flag] = original[flag]
    return clone


def _as_run_setting(optimizer: torch.optim.Optimizer) -> str:
    group = optimizer.param_groups[0]
    for flag in ("fused", "foreach"):
        if group.get(flag):
            return f"{flag}=True"
    return "per-tensor loop"


# the alternative timed: the first of these the class and device accept (a fused step is one
# pass per tensor, foreach one op per step over all tensors; fused was the faster wherever
# bench/rule_fix_speedups.py measured both), so a round times two steps, not three: on a short
# run the what-if budget affords the rounds
PREFERENCE = ("fused", "foreach")


def measure_optimizer(
    optimizer: torch.optim.Optimizer,
    allowance_s: float,
    profiler: dict | None = None,
    forward_backward: Callable[[], object] | None = None,
    program_faults: float | None = None,
    anomaly: bool = False,
) -> list[WhatIfTiming]:
    """One timing: the step as run vs the first alternative of PREFERENCE the optimizer class
    accepts and does not run already (none: nothing is timed). `profiler`: the arguments of the
    torch.profiler.profile the program ran its steps under; both steps are then timed under one
    too, as they run in the program: the profiler's cost per op is part of what the many small
    ops of a per-tensor step cost there (without it the saving came out a third of what
    `--try fused_optimizer` gained on a profiled script). `forward_backward`: the replay's
    forward and backward, timed in the same rounds as a reference (FORWARD_BACKWARD_TIMING):
    with the clone's step as run it is the program's step without torchdoctor's probes, whose
    hooks on a sub-millisecond step took as long as the program's own work. `program_faults`:
    the minor page faults per step of the program's step (whatif/allocator.py). `anomaly`: the
    steps ran under anomaly detection, and so was the reference timed (said in its setting)."""
    params = [p for g in optimizer.param_groups for p in g["params"]]
    if not params:
        return []
    device_type = params[0].device.type
    variants: dict[str, Callable[[], object]] = {"as run": clone_optimizer(optimizer).step}
    current = _as_run_setting(optimizer)
    for flag in PREFERENCE:
        if current == f"{flag}=True":
            break  # already the preferred implementation, or better than the rest
        other = {f: False for f in IMPLEMENTATION_FLAGS if f != flag}
        try:
            variants[f"{flag}=True"] = clone_optimizer(
                optimizer, None, **{flag: True}, **other
            ).step
            break
        except (TypeError, RuntimeError, ValueError):  # this class or device has no such kernel
            continue
    if len(variants) < 2:
        return []
    faults = fault_share(variants["as run"], device_type, program_faults)
    variants, prepare = with_handed_back(variants, "as run", faults)
    if forward_backward is not None:
        variants[FORWARD_BACKWARD_TIMING] = forward_backward
    clock = compute_clock(device_type)  # CPU time on one CPU thread: not the machine's load
    recording: contextlib.AbstractContextManager = contextlib.nullcontext()
    if profiler is not None:
        from torchdoctor.diagnose.whatif.profiler import profiling  # it clones optimizers too

        recording = profiling(profiler)
    try:
        with recording:
            samples, rounds = interleaved_samples(
                variants, device_type, allowance_s, clock, prepare
            )
    except (TypeError, RuntimeError, ValueError):  # a kernel refused these tensors at step time
        return []
    under = " under the program's torch.profiler" if profiler is not None else ""
    medians = {name: statistics.median(v) for name, v in mixed(samples, "as run", faults).items()}
    start = faults.started_from("steps") if faults is not None else ""
    as_run = medians.pop("as run")
    reference = medians.pop(FORWARD_BACKWARD_TIMING, None)
    timings = [
        WhatIfTiming(
            name=f"optimizer.{setting.split('=')[0]}",
            unit="optimizer step",
            as_run_s=as_run,
            alternative_s=seconds,
            repeats=rounds,
            setting=setting + under,
            clock=clock_name(clock),
            started_from=start,
        )
        for setting, seconds in medians.items()
    ]
    if reference is not None:
        timings.append(
            WhatIfTiming(
                name=FORWARD_BACKWARD_TIMING,
                unit="forward and backward",
                as_run_s=reference,
                alternative_s=reference,  # a reference: no fix
                repeats=rounds,
                setting="as run (reference: no fix)"
                + under
                + (" under anomaly detection" if anomaly else ""),
                clock=clock_name(clock),
            )
        )
    return timings
