"""What-if: the program's optimizer step as it ran vs `foreach=True` and `fused=True`, timed on a
clone of its parameters, gradients and state (the program's tensors are never stepped)."""

from __future__ import annotations

import copy
from collections.abc import Callable

import torch

from torchdoctor.diagnose.observations import WhatIfTiming
from torchdoctor.diagnose.whatif.guard import compute_clock, interleaved_medians

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


def measure_optimizer(optimizer: torch.optim.Optimizer, allowance_s: float) -> list[WhatIfTiming]:
    """One timing per alternative the optimizer class accepts (an unsupported one is left out)."""
    params = [p for g in optimizer.param_groups for p in g["params"]]
    if not params:
        return []
    device_type = params[0].device.type
    variants: dict[str, Callable[[], object]] = {"as run": clone_optimizer(optimizer).step}
    current = _as_run_setting(optimizer)
    for flag in IMPLEMENTATION_FLAGS:
        if current == f"{flag}=True":
            continue
        other = {f: False for f in IMPLEMENTATION_FLAGS if f != flag}
        try:
            variants[f"{flag}=True"] = clone_optimizer(
                optimizer, None, **{flag: True}, **other
            ).step
        except (TypeError, RuntimeError, ValueError):  # this class or device has no such kernel
            continue
    if len(variants) < 2:
        return []
    try:
        clock = compute_clock(device_type)  # CPU time on one CPU thread: not the machine's load
        medians, rounds = interleaved_medians(variants, device_type, allowance_s, clock)
    except (TypeError, RuntimeError, ValueError):  # a kernel refused these tensors at step time
        return []
    as_run = medians.pop("as run")
    return [
        WhatIfTiming(
            name=f"optimizer.{setting.split('=')[0]}",
            unit="optimizer step",
            as_run_s=as_run,
            alternative_s=seconds,
            repeats=rounds,
            setting=setting,
        )
        for setting, seconds in medians.items()
    ]
