"""Backward probe: times backward() and records each micro-batch's loss.

Both `Tensor.backward` and `torch.autograd.backward` are patched (the first calls the second, a
depth counter keeps one phase). The loss is kept as a detached tensor and read after the run, so
diagnosing never adds a host-device sync. With a GradScaler the scaled loss is mapped back to the
loss the user passed to `scaler.scale()`.
"""

from __future__ import annotations

import torch

from torchdoctor.diagnose.probes.base import Probe


class BackwardProbe(Probe):
    def install(self, patcher) -> None:
        self.depth = 0
        patcher.replace(torch.Tensor, "backward", self._wrap)
        patcher.replace(torch.autograd, "backward", self._wrap)

    def _loss_of(self, tensors):
        tensor = tensors[0] if isinstance(tensors, (list, tuple)) and tensors else tensors
        if not isinstance(tensor, torch.Tensor) or tensor.numel() != 1:
            return None
        scaled = self.session.unscaled_loss
        if scaled is not None and scaled[0] is tensor:
            tensor = scaled[1]
        return tensor.detach()

    def _wrap(self, original):
        probe = self
        tracker = self.tracker

        def backward(tensors, *args, **kwargs):
            probe.depth += 1
            if probe.depth > 1:
                try:
                    return original(tensors, *args, **kwargs)
                finally:
                    probe.depth -= 1
            tracker.push("backward")
            try:
                result = original(tensors, *args, **kwargs)
            finally:
                tracker.pop()
                probe.depth -= 1
            tracker.backward_finished(probe._loss_of(tensors))
            probe.session.backward_done()
            return result

        return backward
