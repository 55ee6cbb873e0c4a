"""Run float32 matrix multiplies and convolutions on TensorFloat-32 tensor cores (seed 002).

On Ampere and newer GPUs, TF32 keeps float32's range with a 10-bit mantissa and runs matmuls
several times faster. It is a precision change: results move by about 1e-3 relative.
"""

from __future__ import annotations

import torch

from torchdoctor.techniques import finding_codes_for_fix
from torchdoctor.trials.fixes._common import on_cuda

NAME = "tf32"
SUMMARY = "torch.backends.cuda.matmul.allow_tf32 = True; torch.backends.cudnn.allow_tf32 = True"
TOLERANCE = 2e-2
TOLERANCE_REASON = "TF32 rounds matmul inputs to a 10-bit mantissa (~1e-3 per op, compounding)"
FINDING_CODES = finding_codes_for_fix(NAME)  # from the technique registry
PERMANENT = 'torch.set_float32_matmul_precision("high")  # TF32 matmuls on Ampere+'


def applies_to(run) -> bool:
    capability = run.environment.compute_capability if run is not None else None
    return (
        on_cuda(run)
        and capability is not None
        and tuple(capability) >= (8, 0)
        and run.environment.tf32_matmul is not True
    )


def apply(hooks) -> None:
    if hooks.device_type != "cuda" or not torch.cuda.is_available():
        raise RuntimeError("TF32 needs a CUDA device; none is available")
    if torch.cuda.get_device_capability() < (8, 0):
        raise RuntimeError("TF32 needs compute capability 8.0 or newer")
    hooks.set_attribute(torch.backends.cuda.matmul, "allow_tf32", True)
    hooks.set_attribute(torch.backends.cudnn, "allow_tf32", True)
    hooks.mark_used(NAME)
