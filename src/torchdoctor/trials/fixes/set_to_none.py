"""Reset gradients to None instead of filling them with zeros (`zero_grad(set_to_none=True)`).

`zero_grad(set_to_none=False)` writes zeros into every gradient tensor each step (a full pass
over memory the size of the model), and the next backward then adds into them; with
`set_to_none=True` (PyTorch's default since 2.0) the gradients are dropped and the backward
writes them fresh. The fix makes every `Optimizer.zero_grad` and `Module.zero_grad` call reset to
None. It changes results only where a parameter gets no gradient in some step: a zero gradient
still moves it under momentum or weight decay, a None one does not; the loss trajectory check
shows it.
"""

from __future__ import annotations

import torch

from torchdoctor.techniques import finding_codes_for_fix

NAME = "set_to_none"
SUMMARY = "optimizer.zero_grad(set_to_none=True)"
TOLERANCE = 1e-6
TOLERANCE_REASON = "the same gradients: the backward writes them instead of adding to zeros"
FINDING_CODES = finding_codes_for_fix(NAME)  # from the technique registry
# what the fix can shorten (`--try auto` skips it when these take little of the run)
SHORTENS = ("optimizer",)
PERMANENT = "optimizer.zero_grad(set_to_none=True)  # the default since PyTorch 2.0"


def applies_to(run) -> bool:
    return run is not None and any(o.set_to_none is False for o in run.optimizers)


def apply(hooks) -> None:
    for owner in (torch.optim.Optimizer, torch.nn.Module):
        hooks.set_attribute(owner, "zero_grad", _to_none(owner.zero_grad, hooks))


def _to_none(original, hooks):
    def zero_grad(self, set_to_none: bool = True) -> None:
        if not set_to_none:
            hooks.mark_used(NAME)
        original(self, set_to_none=True)

    return zero_grad
