"""Out-of-memory: recognise it, recover from it, and cap memory synthetically for tests.

After an OOM the process must stay usable: the exception's traceback holds the frames of the
failed step (and so its activations), so it is dropped, garbage is collected and the CUDA
caching allocator's free blocks are returned. `preserved_state` puts the model and optimizer back
exactly as they were before the probe, whatever happened inside it.
"""

from __future__ import annotations

import copy
import gc
import traceback
from contextlib import contextmanager

import torch
from torch import nn

from torchdoctor.diagnose.probes.out_of_memory import is_oom

__all__ = ["MemoryCap", "is_oom", "preserved_state", "release"]


def release(exc: BaseException | None = None) -> None:
    """Free what a failed step left behind."""
    if exc is not None and exc.__traceback__ is not None:
        traceback.clear_frames(exc.__traceback__)
        exc.__traceback__ = None
    gc.collect()
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


@contextmanager
def preserved_state(model: nn.Module, optimizer: torch.optim.Optimizer | None = None):
    """Restore the model's (and optimizer's) state_dict on exit, success or failure."""
    model_state = copy.deepcopy(model.state_dict())
    optimizer_state = copy.deepcopy(optimizer.state_dict()) if optimizer is not None else None
    training = model.training
    try:
        yield
    finally:
        model.load_state_dict(model_state)
        model.train(training)
        if optimizer is not None:
            optimizer.load_state_dict(optimizer_state)


class MemoryCap:
    """A synthetic memory limit: raises the CPU allocator's out-of-memory error when the output
    tensors of one forward pass (the activations kept for backward) add up to more than
    `cap_bytes`. Measured on the real tensors, so the largest batch that fits is
    `cap_bytes // activation bytes per sample`."""

    def __init__(self, model: nn.Module, cap_bytes: int):
        self.model, self.cap_bytes, self.current, self.peak = model, cap_bytes, 0, 0
        self._handles = []

    def __enter__(self) -> MemoryCap:
        self._handles.append(self.model.register_forward_pre_hook(self._reset))
        for module in self.model.modules():
            self._handles.append(module.register_forward_hook(self._count))
        return self

    def __exit__(self, *exc) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []

    def _reset(self, module, args) -> None:
        self.current = 0

    def _count(self, module, args, output) -> None:
        if not torch.is_grad_enabled():
            return  # evaluation keeps no activations
        self.current += _tensor_bytes(output)
        self.peak = max(self.peak, self.current)
        if self.current > self.cap_bytes:
            raise RuntimeError(
                f"DefaultCPUAllocator: can't allocate memory: activations reached "
                f"{self.current} bytes (synthetic --memory-cap {self.cap_bytes} bytes)"
            )


def _tensor_bytes(value) -> int:
    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    if isinstance(value, (list, tuple)):
        return sum(_tensor_bytes(v) for v in value)
    if isinstance(value, dict):
        return sum(_tensor_bytes(v) for v in value.values())
    return 0
