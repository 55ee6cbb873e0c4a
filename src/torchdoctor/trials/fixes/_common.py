"""Helpers shared by several fixes: model inspection and dtype casts at the root-model boundary."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn
from torch.utils.data import DataLoader

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


def draw_seed_on_reuse(hooks, made_persistent: Callable[[dict, dict], object]) -> None:
    """Keep the data order of loaders a fix made persistent: a fresh DataLoader iterator draws
    one number from the loader's generator each epoch (its workers' base seed), a reused
    persistent one does not, so from the second epoch on the shuffling (and every later random
    draw) would differ. For loaders where `made_persistent(given_kwargs, final_kwargs)` holds,
    make that draw on each reuse, as a fresh iterator would."""
    changed = set()

    def remember(loader, given: dict, final: dict) -> None:
        if made_persistent(given, final):
            changed.add(id(loader))

    original_iter = DataLoader.__iter__

    def __iter__(loader):
        if id(loader) in changed and loader._iterator is not None:
            torch.empty((), dtype=torch.int64).random_(generator=loader.generator)
        return original_iter(loader)

    hooks.on_loader.append(remember)
    hooks.set_attribute(DataLoader, "__iter__", __iter__)
