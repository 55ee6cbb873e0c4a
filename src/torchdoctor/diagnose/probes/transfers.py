"""Host-to-device copy probe: `Tensor.to` and `Tensor.cuda` from CPU to an accelerator.

A copy made between model calls (nothing else being timed) is the "h2d" phase; copies made inside
a forward are counted but their time stays in the forward. For each copy: bytes, whether the
source was pinned and whether it was asked to be non-blocking.
"""

from __future__ import annotations

from functools import partial

import torch

from torchdoctor.diagnose.callsite import user_location
from torchdoctor.diagnose.observations import TransferObservation
from torchdoctor.diagnose.probes.base import Probe, per_step
from torchdoctor.intercept.patching import (
    dynamo_compiling,
    transforming,
    unpatched_tensor_method,
)


def _non_blocking(args: tuple, kwargs: dict) -> bool:
    if "non_blocking" in kwargs:
        return bool(kwargs["non_blocking"])
    return any(arg is True for arg in args)  # to(device, dtype, non_blocking) / cuda(dev, nb)


def accelerator_available() -> bool:
    accelerator = getattr(torch, "accelerator", None)  # torch >= 2.6: CUDA, MPS, XPU, ...
    if accelerator is not None:
        return bool(accelerator.is_available())
    return torch.cuda.is_available() or torch.backends.mps.is_available()


class TransferProbe(Probe):
    def install(self, patcher) -> None:
        self.locations: dict[str, int] = {}
        # Without an accelerator no copy is host-to-device: a `.to` at the top level (clipping's
        # per-gradient `.to(device)`, 28 a step in a small transformer) opens no "h2d" phase
        self.accelerator = accelerator_available()
        for method in ("to", "cuda"):
            patcher.replace(torch.Tensor, method, partial(self._wrap, method))

    def _wrap(self, method: str, original):
        probe = self
        tracker = self.tracker
        hooks = self.session.hooks
        accelerator = self.accelerator

        # Only dynamo's test comes first: a copy that opens no phase and has no fix to apply
        # (torch's own `.to` calls inside a forward) goes straight on, and jit.trace and export
        # record the op whatever Python calls it (patching.py).
        def copy(tensor, *args, **kwargs):
            if dynamo_compiling():
                return unpatched_tensor_method(method)(tensor, *args, **kwargs)
            top = accelerator and not tracker.stack
            if (top or hooks.tensor_to) and transforming():
                return unpatched_tensor_method(method)(tensor, *args, **kwargs)
            if hooks.tensor_to:
                args, kwargs = hooks.rewrite_copy(tensor, args, kwargs)
            if top:
                tracker.push("h2d")
            try:
                out = original(tensor, *args, **kwargs)
            finally:
                if top:
                    tracker.pop()
            # is_cpu: no device object
            if out is not tensor and tensor.is_cpu and not out.is_cpu and not transforming():
                probe._record(tensor, args, kwargs)
            return out

        return copy

    def _record(self, tensor, args, kwargs) -> None:
        size = tensor.numel() * tensor.element_size()
        counters = self.tracker.counters
        counters["h2d_copies"] = counters.get("h2d_copies", 0) + 1
        counters["h2d_bytes"] = counters.get("h2d_bytes", 0) + size
        if tensor.is_pinned():
            counters["h2d_pinned_bytes"] = counters.get("h2d_pinned_bytes", 0) + size
        if _non_blocking(args, kwargs):
            counters["h2d_non_blocking_bytes"] = counters.get("h2d_non_blocking_bytes", 0) + size
        location = user_location(3)
        self.locations[location] = self.locations.get(location, 0) + 1

    def contribute(self, run, measured) -> None:
        copied = per_step(measured, "h2d_bytes")
        run.transfers = TransferObservation(
            copies_per_step=per_step(measured, "h2d_copies"),
            bytes_per_step=copied,
            pinned_fraction=per_step(measured, "h2d_pinned_bytes") / copied if copied else None,
            non_blocking_fraction=(
                per_step(measured, "h2d_non_blocking_bytes") / copied if copied else None
            ),
            seconds_per_step=(
                sum(r.phases.get("h2d", 0.0) for r in measured) / len(measured) if measured else 0.0
            ),
            locations=sorted(self.locations, key=lambda k: -self.locations[k])[:10],
        )
