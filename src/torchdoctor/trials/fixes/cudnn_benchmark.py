"""Let cuDNN time its convolution algorithms once and keep the fastest (seed 002/004).

With fixed input shapes, `torch.backends.cudnn.benchmark = True` picks the fastest kernel for
each convolution after a first timed pass. Different kernels add in a different order, so results
may differ in the last bits, never more.
"""

from __future__ import annotations

import torch

from torchdoctor.techniques import finding_codes_for_fix
from torchdoctor.trials.fixes._common import on_cuda

NAME = "cudnn_benchmark"
SUMMARY = "torch.backends.cudnn.benchmark = True"
TOLERANCE = 1e-3
TOLERANCE_REASON = "another convolution algorithm sums in another order (float32 rounding)"
FINDING_CODES = finding_codes_for_fix(NAME)  # from the technique registry
PERMANENT = "torch.backends.cudnn.benchmark = True  # input shapes are fixed"


def applies_to(run) -> bool:
    return (
        on_cuda(run)
        and run.environment.cudnn_benchmark is not True
        and run.environment.input_shapes_fixed is not False
        and any(model.conv_layers for model in run.models)
    )


def apply(hooks) -> None:
    if hooks.device_type != "cuda" or not torch.cuda.is_available():
        raise RuntimeError("cudnn.benchmark needs a CUDA device; none is available")
    hooks.set_attribute(torch.backends.cudnn, "benchmark", True)
    hooks.mark_used(NAME)
