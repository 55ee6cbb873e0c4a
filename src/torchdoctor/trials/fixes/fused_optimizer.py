"""Run the optimizer step fused (one kernel pass per tensor) or batched over tensors (foreach).

The default optimizer step on a CPU (and with `foreach=False` on CUDA) updates each parameter with
a chain of separate ops, each a full pass over the tensor and its state. `fused=True` does the
whole update in one pass; optimizers without a fused kernel get `foreach=True`. The constructor
of each torch.optim optimizer that accepts these arguments gets them when the script passed
neither. Same update rule; the arithmetic is ordered differently, so the last bits can move.
"""

from __future__ import annotations

import inspect

import torch

from torchdoctor.techniques import finding_codes_for_fix

NAME = "fused_optimizer"
SUMMARY = "torch.optim.<Optimizer>(..., fused=True) (foreach=True where no fused kernel exists)"
TOLERANCE = 1e-4
TOLERANCE_REASON = "the same update with the arithmetic ordered differently (last-bit rounding)"
FINDING_CODES = finding_codes_for_fix(NAME)  # from the technique registry
# what the fix can shorten (`--try auto` skips it when these take little of the run)
SHORTENS = ("optimizer",)
# the phase it changes, timed alone beside the whole step (trials.stats.phase_speedups): the
# optimizer step is often a small part of a step, whose gain the rest's noise hides
PHASE_CLOCK = ("optimizer",)
PERMANENT = "optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)"


def applies_to(run) -> bool:
    if run is None:
        return False
    on_cuda = run.environment.device_type == "cuda"
    # as rule D210 decides: from the implementations the optimizer accepts (RAdam, NAdam,
    # RMSprop... take foreach), not from its class's name
    return any(
        bool(o.implementations)
        and (o.foreach_or_fused is False or (o.foreach_or_fused is None and not on_cuda))
        for o in run.optimizers
    )


def _optimizer_classes() -> list[type]:
    classes = []
    for name in dir(torch.optim):
        value = getattr(torch.optim, name)
        if isinstance(value, type) and issubclass(value, torch.optim.Optimizer):
            if value is not torch.optim.Optimizer:
                classes.append(value)
    return classes


def _faster_kwarg(cls: type) -> str | None:
    parameters = inspect.signature(cls).parameters
    if "fused" in parameters:
        return "fused"
    return "foreach" if "foreach" in parameters else None


def _fusable(params) -> bool:
    """fused kernels need floating-point parameters on one device type."""
    tensors = [p for group in params for p in (group["params"] if isinstance(group, dict)
               else [group])]  # fmt: skip
    return (
        bool(tensors)
        and len({t.device.type for t in tensors}) == 1
        and all(t.is_floating_point() for t in tensors)
    )


def apply(hooks) -> None:
    for cls in _optimizer_classes():
        kwarg = _faster_kwarg(cls)
        own_init = vars(cls).get("__init__")  # only classes that define their own constructor
        if kwarg is not None and own_init is not None:
            hooks.set_attribute(cls, "__init__", _with_faster_step(own_init, kwarg, hooks))


def _with_faster_step(original, kwarg: str, hooks):
    def __init__(optimizer, params, *args, **kwargs):
        if kwargs.get("fused") is not None or kwargs.get("foreach") is not None:
            return original(optimizer, params, *args, **kwargs)  # the script chose: leave it
        params = list(params)
        choice = kwarg if kwarg == "foreach" or _fusable(params) else "foreach"
        if choice == "fused":
            try:
                original(optimizer, params, *args, **kwargs, fused=True)
                hooks.mark_used(NAME)
                return None
            except (RuntimeError, ValueError):  # no fused kernel for these parameters here
                choice = "foreach"
        if "foreach" not in inspect.signature(original).parameters:
            return original(optimizer, params, *args, **kwargs)
        hooks.mark_used(NAME)
        return original(optimizer, params, *args, **kwargs, foreach=True)

    return __init__
