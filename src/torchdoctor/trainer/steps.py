"""One micro-step (forward + weighted backward) and one optimizer step, in the order that makes
mixed precision, clipping and accumulation correct together:

    for each micro-batch of the window:
        with autocast(device_type, dtype):  outputs = model(x); loss = loss_fn(outputs, y)
        scaler.scale(loss * n_micro / n_window).backward()      # grads accumulate in .grad
    scaler.unscale_(optimizer)      # fp16 only: bring grads back to true scale ...
    norm = clip_grad_norm_(params)  # ... so the clip threshold means what it says
    scaler.step(optimizer); scaler.update()   # skips the step if grads hold inf/NaN
    optimizer.zero_grad(set_to_none=True)     # frees grads instead of writing zeros
    scheduler.step()                          # per optimizer step, not per micro-batch
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from torchdoctor.errors import UsageError


@dataclass
class StepParts:
    model: Callable  # the module to call (possibly torch.compile'd)
    optimizer: torch.optim.Optimizer
    loss_fn: Callable
    parameters: list[nn.Parameter]
    device_type: str
    autocast_dtype: torch.dtype | None
    scaler: torch.amp.GradScaler | None = None
    clip_norm: float | None = None
    scheduler: Any = None

    def autocast(self):
        if self.autocast_dtype is None:
            return contextlib.nullcontext()
        return torch.amp.autocast(self.device_type, dtype=self.autocast_dtype)


def forward_loss(parts: StepParts, inputs, targets) -> tuple[torch.Tensor, Any]:
    """Forward pass and loss under autocast (the loss_fn inside too: autocast keeps reductions
    such as cross-entropy in fp32)."""
    with parts.autocast():
        outputs = parts.model(inputs)
        loss = parts.loss_fn(outputs, targets)
    if loss.ndim != 0:  # e.g. reduction="none": backward() would fail with torch's riddle
        raise UsageError(
            f"loss_fn must return a scalar (reduce with mean), got shape {tuple(loss.shape)}"
        )
    return loss, outputs


def backward(parts: StepParts, loss: torch.Tensor, weight: float) -> None:
    """Accumulate this micro-batch's share of the window gradient.

    `loss` is the mean over the micro-batch's n samples; weight = n / n_window, so the summed
    gradient of a window equals the gradient of the mean loss over the window's samples, also
    for a short last window (4, 4, 2 micro-batches, or a smaller last batch).
    """
    if weight != 1.0:  # accumulate=1: skip a kernel launch per step
        loss = loss * weight
    if parts.scaler is not None:
        parts.scaler.scale(loss).backward()
    else:
        loss.backward()


def optimizer_step(parts: StepParts) -> torch.Tensor | None:
    """Unscale, clip, step, zero, schedule. Returns the pre-clip total gradient norm (a tensor,
    not synced) when clipping is on, else None."""
    norm = None
    if parts.clip_norm is not None:
        if parts.scaler is not None:
            parts.scaler.unscale_(parts.optimizer)
        norm = torch.nn.utils.clip_grad_norm_(parts.parameters, parts.clip_norm)
    if parts.scaler is not None:
        parts.scaler.step(parts.optimizer)
        parts.scaler.update()
    else:
        parts.optimizer.step()
    parts.optimizer.zero_grad(set_to_none=True)
    if parts.scheduler is not None:
        parts.scheduler.step()
    return norm
