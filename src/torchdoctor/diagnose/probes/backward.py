"""Backward probe: times backward() and records each micro-batch's loss.

`Tensor.backward`, `torch.autograd.backward` and `torch.autograd.grad` are patched (the first
calls the second, a depth counter keeps one phase). This is the one wrapper of a backward: other
probes that look at backward() (the memory probe's loss references, the habits probe's second
backward through a retained graph) add listeners here instead of wrapping it again, so a step
pays for one wrapper, not three. A loss on a device is kept as a detached
tensor and read after the run, so diagnosing never adds a host-device sync. A CPU loss is read
at once, into a float (no device to wait for): keeping every step's tensor left a small storage
per step among the step's large buffers in the heap (in one watched 784-512-512 MLP loop, 37-78
page faults a step with the tensors kept, 1-8 with floats; docs/benchmarks.md, overhead round 5).
With a GradScaler the scaled loss is mapped back to the loss the user passed to
`scaler.scale()`.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import torch

from torchdoctor.diagnose.probes.base import Probe
from torchdoctor.intercept.patching import transforming

_item = torch._C.TensorBase.item  # the C method, past the sync probe's patch of Tensor.item


# before(args, kwargs): an outermost backward() (not autograd.grad) is about to run, called with
# its arguments (Tensor.backward's or torch.autograd.backward's: the loss first)
BeforeBackward = Callable[[tuple, dict], None]
# after(args, kwargs, seconds): it returned (or raised) after `seconds`
AfterBackward = Callable[[tuple, dict, float], None]


def backward_probe(session) -> BackwardProbe | None:
    """The session's backward probe (None when left out: --per-probe)."""
    return next((p for p in session.probes if isinstance(p, BackwardProbe)), None)


class BackwardProbe(Probe):
    def __init__(self, session) -> None:
        super().__init__(session)
        self.before: list[BeforeBackward] = []
        self.after: list[AfterBackward] = []

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

    def _timed(self, original, loss, args, kwargs, counts: bool, listened: bool = False):
        """Run one outermost backward as the "backward" phase; `counts`: it is a micro-batch's
        backward; `listened`: a backward() (not autograd.grad), told to the listeners."""
        if listened:
            for before in self.before:
                before(args, kwargs)
        self.depth += 1
        self.tracker.push("backward")
        started = time.perf_counter()
        try:
            result = original(*args, **kwargs)
        finally:
            seconds = time.perf_counter() - started
            self.tracker.pop()
            self.depth -= 1
            if listened:
                for after in self.after:
                    after(args, kwargs, seconds)
        if counts:
            self.tracker.backward_finished(self._loss_of(loss))
            self.session.backward_done()
        return result

    def _wrap(self, original):
        probe = self

        def backward(tensors, *args, **kwargs):
            # nested (Tensor.backward calls torch.autograd.backward), or traced by dynamo
            if probe.depth or transforming():
                return original(tensors, *args, **kwargs)
            return probe._timed(original, tensors, (tensors, *args), kwargs, True, True)

        return backward

    def _wrap_grad(self, original):
        """`torch.autograd.grad` is a backward too. It counts as a micro-batch's backward (and
        ends the step) only in runs that update the parameters by hand: with an optimizer it is
        a part of the step, e.g. a gradient penalty before `loss.backward()`."""
        probe = self
        session = self.session

        def grad(*args, **kwargs):
            if probe.depth or transforming():
                return original(*args, **kwargs)
            counts = not (session.optimizers_created or session.optimizer_stepped)
            outputs = args[0] if args else kwargs.get("outputs")
            return probe._timed(original, outputs, args, kwargs, counts=counts)

        return grad
