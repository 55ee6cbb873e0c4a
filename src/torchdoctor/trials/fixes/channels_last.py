"""Store convolution activations and weights as NHWC (`channels_last`) (seed 002/004).

Tensor-core and oneDNN convolution kernels prefer channels-last layouts; with NCHW tensors every
convolution pays layout conversions. The root model's parameters and its 4-D floating inputs are
converted once they reach the model. Same math, other kernels: last-bit differences only.
"""

from __future__ import annotations

import torch

from torchdoctor.techniques import finding_codes_for_fix
from torchdoctor.trials.fixes._common import has_conv
from torchdoctor.trials.hooks import map_tensors

NAME = "channels_last"
SUMMARY = "model.to(memory_format=torch.channels_last) and 4-D inputs likewise"
TOLERANCE = 1e-3
TOLERANCE_REASON = "other convolution kernels sum in another order (float32 rounding)"
FINDING_CODES = finding_codes_for_fix(NAME)  # from the technique registry
PERMANENT = """\
model = model.to(memory_format=torch.channels_last)
inputs = inputs.to(device, memory_format=torch.channels_last, non_blocking=True)"""


def applies_to(run) -> bool:
    return run is not None and any(
        model.conv_layers and model.conv_channels_last_inputs is not True for model in run.models
    )


def _to_channels_last(tensor: torch.Tensor) -> torch.Tensor:
    if tensor.dim() == 4 and tensor.is_floating_point():
        return tensor.contiguous(memory_format=torch.channels_last)
    return tensor


def apply(hooks) -> None:
    converted: set[int] = set()

    def forward(module, call, args, kwargs):
        if not has_conv(module):
            return call(module, args, kwargs)
        if id(module) not in converted:
            module.to(memory_format=torch.channels_last)  # in place: the optimizer keeps its params
            converted.add(id(module))
            hooks.mark_used(NAME)
        return call(module, map_tensors(args, _to_channels_last), kwargs)

    hooks.around_forward.append(forward)
