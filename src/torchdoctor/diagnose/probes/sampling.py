"""The sampled step: count dispatched ops, compute ops by dtype, and FLOPs, for ONE step.

Dispatch modes see every aten op, which is exactly what makes them slow; so they are entered at
the end of the step before the sampled step and left at its end, and that step is a warm-up step
whose timings are never reported.
"""

from __future__ import annotations

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from torchdoctor.diagnose.probes.base import Probe

aten = torch.ops.aten
_COMPUTE = {
    aten.mm, aten.addmm, aten.bmm, aten.baddbmm, aten.mv, aten.addmv, aten.dot,
    aten.convolution, aten.convolution_backward,
}  # fmt: skip
_LOW_PRECISION = {torch.float16, torch.bfloat16}


class OpCounter(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.ops = 0
        self.float64 = 0
        self.float32 = 0
        self.low_precision = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops += 1
        if func.overloadpacket in _COMPUTE:
            dtype = next((a.dtype for a in args if isinstance(a, torch.Tensor)), None)
            if dtype == torch.float64:
                self.float64 += 1
            elif dtype == torch.float32:
                self.float32 += 1
            elif dtype in _LOW_PRECISION:
                self.low_precision += 1
        return func(*args, **(kwargs or {}))


class SamplingProbe(Probe):
    def install(self, patcher) -> None:
        self.modes: list = []
        self.counter: OpCounter | None = None
        self.flops: float | None = None
        self.done = False
        self.error: str | None = None

    def on_step_end(self, record) -> None:
        if record.index == self.session.sampled_index - 1 and not (self.done or self.modes):
            self._start()
        elif record.index == self.session.sampled_index and self.modes:
            self._finish()

    def _start(self) -> None:
        self.counter = OpCounter()
        try:
            from torch.utils.flop_counter import FlopCounterMode

            flop_counter = FlopCounterMode(display=False)
            flop_counter.__enter__()
            self.modes.append(flop_counter)
        except Exception as exc:  # FLOP counting is optional; say why it is missing
            self.error = f"FLOP counting unavailable: {type(exc).__name__}: {exc}"
        self.counter.__enter__()
        self.modes.append(self.counter)

    def _finish(self) -> None:
        while self.modes:
            mode = self.modes.pop()
            mode.__exit__(None, None, None)
            if hasattr(mode, "get_total_flops"):
                self.flops = float(mode.get_total_flops())
        self.done = True

    def stop(self) -> None:
        if self.modes:  # the run ended inside the sampled step: counts are partial, drop them
            while self.modes:
                self.modes.pop().__exit__(None, None, None)
            self.counter = None
            self.flops = None

    def contribute(self, run, measured) -> None:
        if self.error:
            run.notes.append(self.error)
        if not self.done or self.counter is None:
            return
        run.precision.float64_ops = self.counter.float64
        run.precision.float32_ops = self.counter.float32
        run.precision.low_precision_ops = self.counter.low_precision
        run.compute.ops_per_step = float(self.counter.ops)
        run.compute.flops_per_step = self.flops
