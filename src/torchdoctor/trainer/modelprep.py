"""Model transformations applied once before training: device placement and memory format,
activation checkpointing of named submodules, and opt-in torch.compile."""

from __future__ import annotations

import functools

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

from torchdoctor.errors import UsageError


def place_model(model: nn.Module, device: torch.device, channels_last: bool) -> nn.Module:
    """Move to the device; NHWC weights for conv models when channels_last (4-D params only:
    `Module.to(memory_format=...)` converts exactly those)."""
    if channels_last:
        return model.to(device=device, memory_format=torch.channels_last)
    return model.to(device)


def checkpoint_submodules(model: nn.Module, names: list[str]) -> None:
    """Recompute the named submodules' activations in backward instead of storing them.

    The submodule's forward is wrapped (not the module replaced), so parameter names and
    state_dict keys are unchanged and checkpoints stay interchangeable with unwrapped runs.
    Checkpointing only applies while training with grad enabled; eval runs the plain forward.
    """
    for name in names:
        module = _submodule(model, name)
        if getattr(module.forward, "_torchdoctor_checkpointed", False):
            continue
        module.forward = _checkpointed(module, module.forward)


# Prefixes a report may show when diagnose saw the model through a wrapper: DataParallel/DDP
# ("module."), torch.compile ("_orig_mod.").
WRAPPER_PREFIXES = ("module.", "_orig_mod.")


def _submodule(model: nn.Module, name: str) -> nn.Module:
    """`model.get_submodule(name)`, also for a name as `torchdoctor diagnose` reports it (the
    qualified name in the model it saw, which may carry a wrapper's prefix)."""
    candidates = [name]
    stripped = name
    while stripped.startswith(WRAPPER_PREFIXES):
        stripped = stripped.split(".", 1)[1]
        candidates.append(stripped)
    for candidate in candidates:
        try:
            return model.get_submodule(candidate)
        except AttributeError:
            continue
    raise UsageError(f"activation checkpointing: model has no submodule {name!r}")


def _checkpointed(module: nn.Module, forward):
    @functools.wraps(forward)
    def run(*args, **kwargs):
        if module.training and torch.is_grad_enabled():
            # use_reentrant=False: works with kwargs, inputs that need no grad, and torch.compile
            return checkpoint(forward, *args, use_reentrant=False, **kwargs)
        return forward(*args, **kwargs)

    run._torchdoctor_checkpointed = True
    return run


def compile_model(model: nn.Module, enabled: bool, mode: str | None):
    """torch.compile is opt-in: compilation costs seconds to minutes up front and only pays
    back over long runs with stable shapes. Returns the callable to use for forward passes; the
    original module stays the one whose state_dict is saved (no `_orig_mod.` prefixes)."""
    if not enabled:
        return model
    return torch.compile(model, mode=mode)
