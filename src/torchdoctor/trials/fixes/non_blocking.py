"""Copy pinned batches to the GPU asynchronously (seed 004: pin_memory + non_blocking).

`tensor.to("cuda", non_blocking=True)` from pinned memory returns at once and lets the host
prepare the next step while the copy runs. Only host-to-device copies from pinned memory are
changed: a non-blocking device-to-host copy could be read before it lands.
"""

from __future__ import annotations

import torch

from torchdoctor.techniques import finding_codes_for_fix
from torchdoctor.trials.fixes._common import on_cuda

NAME = "non_blocking"
SUMMARY = "tensor.to(device, non_blocking=True) for pinned host-to-device copies"
TOLERANCE = 1e-6
TOLERANCE_REASON = "the same bytes arrive; only the host stops waiting for them"
FINDING_CODES = finding_codes_for_fix(NAME)  # from the technique registry
PERMANENT = "x = x.to(device, non_blocking=True)  # with DataLoader(..., pin_memory=True)"


def applies_to(run) -> bool:
    if not on_cuda(run) or run.transfers.copies_per_step == 0:
        return False
    fraction = run.transfers.non_blocking_fraction
    return fraction is None or fraction < 1.0


def target_device(args: tuple, kwargs: dict) -> torch.device | None:
    candidate = kwargs.get("device", args[0] if args else None)
    if isinstance(candidate, (str, torch.device)):
        try:
            return torch.device(candidate)
        except RuntimeError:
            return None
    return None


def apply(hooks) -> None:
    if hooks.device_type != "cuda" or not torch.cuda.is_available():
        raise RuntimeError("non_blocking copies need a CUDA device; none is available")

    def rewrite(tensor, args: tuple, kwargs: dict):
        device = target_device(args, kwargs)
        if device is not None and device.type == "cuda" and tensor.device.type == "cpu":
            if tensor.is_pinned() and not kwargs.get("non_blocking", False):
                kwargs = {**kwargs, "non_blocking": True}
                hooks.mark_used(NAME)
        return args, kwargs

    hooks.tensor_to.append(rewrite)
