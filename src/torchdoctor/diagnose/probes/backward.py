"""Backward probe: times backward() and records each micro-batch's loss.

`Tensor.backward`, `torch.autograd.backward` and `torch.autograd.grad` are patched (the first
calls the second, a depth counter keeps one phase). A loss on a device is kept as a detached
tensor and read after the run, so diagnosing never adds a host-device sync. A CPU loss is read
at once, into a float (no device to wait for): keeping every step's tensor left a small storage
per step among the step's large buffers in the heap (in one watched 784-512-512 MLP loop, 37-78
page faults a step with the tensors kept, 1-8 with floats; docs/benchmarks.md, overhead round 5).
With a GradScaler the scaled loss is mapped back to the loss the user passed to
`scaler.scale()`.
"""

from __future__ import annotations

import torch

from torchdoctor.diagnose.probes.base import Probe
from torchdoctor.intercept.patching import transforming

_item = torch._C.TensorBase.item  # the C method, past the sync probe's patch of Tensor.item


class BackwardProbe(Probe):
    def install(self, patcher) -> None:
        self.depth = 0
        patcher.replace(torch.Tensor, "backward", self._wrap)
        patcher.replace(torch.autograd, "backward", self._wrap)
        patcher.replace(torch.autograd, "grad", self._wrap_grad)

    def _loss_of(self, tensors):
        tensor = tensors[0] if isinstance(tensors, (list, tuple)) and tensors else tensors
        if not isinstance(tensor, torch.Tensor) or tensor.numel() != 1:
            return None
        scaled = self.session.unscaled_loss
        if scaled is not None and scaled[0] is tensor:
            tensor = scaled[1]
        if tensor.is_cpu:
            try:
                return _item(tensor)  # torch's own method: not a host read of the program's
            except RuntimeError:  # not readable as a number (a meta tensor)
                return None
        return tensor.detach()

    def _timed(self, original, loss, args, kwargs, counts: bool):
        """Run one backward as the "backward" phase; `counts`: it is a micro-batch's backward."""
        if transforming():
            return original(*args, **kwargs)
        self.depth += 1
        if self.depth > 1:  # nested (Tensor.backward calls torch.autograd.backward)
            try:
                return original(*args, **kwargs)
            finally:
                self.depth -= 1
        self.tracker.push("backward")
        try:
            result = original(*args, **kwargs)
        finally:
            self.tracker.pop()
            self.depth -= 1
        if counts:
            self.tracker.backward_finished(self._loss_of(loss))
            self.session.backward_done()
        return result

    def _wrap(self, original):
        probe = self

        def backward(tensors, *args, **kwargs):
            return probe._timed(original, tensors, (tensors, *args), kwargs, counts=True)

        return backward

    def _wrap_grad(self, original):
        """`torch.autograd.grad` is a backward too. It counts as a micro-batch's backward (and
        ends the step) only in runs that update the parameters by hand: with an optimizer it is
        a part of the step, e.g. a gradient penalty before `loss.backward()`."""
        probe = self
        session = self.session

        def grad(*args, **kwargs):
            counts = not (session.optimizers_created or session.optimizer_stepped)
            outputs = args[0] if args else kwargs.get("outputs")
            return probe._timed(original, outputs, args, kwargs, counts=counts)

        return grad
