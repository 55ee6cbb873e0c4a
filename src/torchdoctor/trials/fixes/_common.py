"""Helpers shared by several fixes: model inspection and dtype casts at the root-model boundary."""

from __future__ import annotations

import torch
from torch import nn

from torchdoctor.intercept.hooks import map_tensors


def has_conv(module: nn.Module) -> bool:
    return any(isinstance(m, (nn.Conv1d, nn.Conv2d, nn.Conv3d)) for m in module.modules())


def cast_floating(value, source: torch.dtype, target: torch.dtype):
    """Cast every tensor of dtype `source` in a nested structure to `target`."""
    return map_tensors(value, lambda t: t.to(target) if t.dtype == source else t)


def cast_low_precision_to_float32(value):
    return map_tensors(
        value, lambda t: t.float() if t.dtype in (torch.float16, torch.bfloat16) else t
    )


def loaders(run):
    return [] if run is None else run.loaders


def on_cuda(run) -> bool:
    return run is not None and run.environment.device_type == "cuda"


def cpu_bf16_supported() -> bool:
    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False
