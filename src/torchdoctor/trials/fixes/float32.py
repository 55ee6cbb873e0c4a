"""Train in float32 instead of float64.

NumPy arrays default to float64, and `torch.tensor(array)` or `model.double()` carries that into
the model: float64 matmuls and convolutions run many times slower (no vector units or tensor
cores at full width) and double the memory. The root model is converted to float32 and its
float64 inputs are cast; outputs are cast back to float64 so the script's own loss and metrics
code sees the dtypes it expects. A precision change, but float32 keeps 24 mantissa bits.
"""

from __future__ import annotations

import torch

from torchdoctor.techniques import finding_codes_for_fix
from torchdoctor.trials.fixes._common import cast_floating

NAME = "float32"
SUMMARY = "model.float() and float64 inputs cast to float32"
TOLERANCE = 1e-3
TOLERANCE_REASON = "float32 rounds at ~6e-8 relative per op; the trajectory drifts slowly"
FINDING_CODES = finding_codes_for_fix(NAME)  # from the technique registry
PERMANENT = """\
model = model.float()
inputs = torch.as_tensor(array, dtype=torch.float32)  # NumPy arrays default to float64"""


def applies_to(run) -> bool:
    if run is None:
        return False
    in_params = any("float64" in dtype for model in run.models for dtype in model.parameter_dtypes)
    return in_params or run.precision.float64_ops > 0


def apply(hooks) -> None:
    converted: set[int] = set()

    def forward(module, call, args, kwargs):
        is_double = any(p.dtype == torch.float64 for p in module.parameters())
        if not is_double and id(module) not in converted:
            return call(module, args, kwargs)
        if is_double:
            module.float()  # in place: the optimizer keeps the same Parameter objects
            converted.add(id(module))
            hooks.mark_used(NAME)
        args = cast_floating(args, torch.float64, torch.float32)
        kwargs = cast_floating(kwargs, torch.float64, torch.float32)
        return cast_floating(call(module, args, kwargs), torch.float32, torch.float64)

    hooks.around_forward.append(forward)
