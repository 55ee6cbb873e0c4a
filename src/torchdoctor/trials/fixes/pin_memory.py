"""Build batches in page-locked (pinned) host memory (seed 000, seed 004's first step).

Copies from pinned memory to the GPU are faster and can run asynchronously (with
`non_blocking=True`). Only meaningful when batches go to a CUDA device; on a CPU-only run it
changes nothing and is not applied.
"""

from __future__ import annotations

import torch

from torchdoctor.techniques import finding_codes_for_fix
from torchdoctor.trials.fixes._common import loaders, on_cuda

NAME = "pin_memory"
SUMMARY = "DataLoader(pin_memory=True)"
TOLERANCE = 1e-6
TOLERANCE_REASON = "the same bytes, copied from a different kind of host memory"
FINDING_CODES = finding_codes_for_fix(NAME)  # from the technique registry
PERMANENT = "DataLoader(dataset, ..., pin_memory=torch.cuda.is_available())"


def applies_to(run) -> bool:
    return on_cuda(run) and any(not loader.pin_memory for loader in loaders(run))


def apply(hooks) -> None:
    if hooks.device_type != "cuda" or not torch.cuda.is_available():
        raise RuntimeError("pinned memory only helps copies to a CUDA device; none is available")

    def rewrite(kwargs: dict) -> dict:
        if not kwargs.get("pin_memory", False):
            kwargs["pin_memory"] = True
            hooks.mark_used(NAME)
        return kwargs

    hooks.loader_kwargs.append(rewrite)
