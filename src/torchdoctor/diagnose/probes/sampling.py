"""The sampled step: count dispatched ops, compute ops by dtype, and FLOPs, for ONE step; and
the torch calls the program issued from Python in that step (a function mode sees those, not the
ops ATen or autograd issue inside them).

A dispatch mode sees every aten op, which is exactly what makes it slow; so it is entered at the
end of the step before the sampled step and left at its end, and that step is a warm-up step
whose timings are never reported. FLOPs use torch's own per-op formulas
(`torch.utils.flop_counter.flop_registry`) from inside our mode: `FlopCounterMode` itself would
import torch._dynamo (seconds) and stack a second mode.
"""

from __future__ import annotations

import bisect
import sys
import time
from array import array
from collections import Counter
from collections.abc import Callable
from typing import Any

import torch
from torch.autograd.function import BackwardCFunction
from torch.overrides import TorchFunctionMode, _get_current_function_mode_stack
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import flop_registry

from torchdoctor.diagnose.callsite import is_library_code
from torchdoctor.diagnose.observations import OpCount
from torchdoctor.diagnose.probes.base import Probe
from torchdoctor.diagnose.probes.replaced_torch import RelayedCalls
from torchdoctor.diagnose.steps import StepRecord

aten = torch.ops.aten
_COMPUTE = {
    aten.mm, aten.addmm, aten.bmm, aten.baddbmm, aten.mv, aten.addmv, aten.dot,
    aten.convolution, aten.convolution_backward,
}  # fmt: skip
_LOW_PRECISION = {torch.float16, torch.bfloat16}
TOP_OPS = 10  # ops of the sampled step named in the report
CALLER_FRAMES = 4  # frames walked up from a torch call to the program's own frame


class OpCounter(TorchDispatchMode):
    def __init__(
        self, phases: list[str] | None = None, clock: Callable[[], float] = time.perf_counter
    ) -> None:
        super().__init__()
        self.phases = phases if phases is not None else []  # the tracker's phase stack
        self.clock = clock
        self.ops = 0
        self.data_ops = 0  # dispatched while the DataLoader built a batch in this process
        self.optimizer_ops = 0  # dispatched inside optimizer.step()
        # when each op outside the "data" phase was dispatched (the tracker's clock): the step's
        # evaluation spans are only known when it closes
        self.times = array("d")
        self.float64 = 0
        self.float32 = 0
        self.low_precision = 0
        self.flops = 0
        self.flop_errors: set[str] = set()
        self.by_op: Counter[Any] = Counter()  # op overload packet -> dispatches
        self.flops_by_op: Counter[Any] = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        self.ops += 1
        if self.phases and self.phases[-1] == "data":
            self.data_ops += 1
        else:
            self.times.append(self.clock())
            if self.phases and self.phases[-1] == "optimizer":
                self.optimizer_ops += 1
        packet = func.overloadpacket
        self.by_op[packet] += 1  # keyed by the packet: its name is built once, in contribute
        formula = flop_registry.get(packet)
        if formula is not None:
            try:
                flops = formula(*args, **kwargs, out_val=out)
                self.flops += flops
                self.flops_by_op[packet] += flops
            except Exception:  # a formula that does not fit these arguments: count it as unknown
                self.flop_errors.add(str(packet))
        if packet in _COMPUTE:
            dtype = next((a.dtype for a in args if isinstance(a, torch.Tensor)), None)
            if dtype == torch.float64:
                self.float64 += 1
            elif dtype == torch.float32:
                self.float32 += 1
            elif dtype in _LOW_PRECISION:
                self.low_precision += 1
        return out


class PythonCallCounter(TorchFunctionMode):
    """Counts torch calls made from Python. Inside a handler the mode is off, so a call that
    makes further torch calls (F.dropout, nn.GRU's _VF.gru) counts once, and backward() once;
    the Python backwards of custom autograd Functions it runs are counted (`in_backward`).
    A function the program replaced (its own counting `Tensor.backward`) is relayed to the mode
    as the replacement, which has already run: the mode runs the original (`RelayedCalls`)."""

    def __init__(
        self,
        phases: list[str],
        clock: Callable[[], float] = time.perf_counter,
        outside: Callable[[Any], None] | None = None,
    ) -> None:
        super().__init__()
        self.phases = phases
        self.clock = clock
        self.calls = 0
        self.times = array("d")  # when each counted call was made (see OpCounter.times)
        # told, once per calling code, of the program's frame that made a call outside every
        # phase (the step's "other" time: a model's functional forward is found there)
        self.outside = outside
        self.callers_seen: set[Any] = set()
        relayed = RelayedCalls()
        self.original = relayed.original if relayed else None  # None: nothing replaced

    def __torch_function__(self, func, types, args=(), kwargs=None):
        phases = self.phases
        if not (phases and phases[-1] == "data"):
            self.calls += 1
            self.times.append(self.clock())
            outside = self.outside
            if not phases and outside is not None and _records_grad(args, kwargs):
                self._note_caller(sys._getframe(1), outside)
        if self.original is not None:
            func = self.original(func)
        return func(*args, **(kwargs or {}))

    def _note_caller(self, frame, outside: Callable[[Any], None]) -> None:
        # past torch's Python wrappers (F.relu's has_torch_function relay) to the program's frame
        for _ in range(CALLER_FRAMES):
            if frame is None:
                return
            if not is_library_code(frame.f_code):
                break
            frame = frame.f_back
        else:
            return
        code = frame.f_code
        if code not in self.callers_seen:
            self.callers_seen.add(code)
            outside(frame)


def _records_grad(args, kwargs) -> bool:
    """Autograd records this call: grad mode is on and a tensor argument requires grad (a
    functional forward on weights; not an EMA copy of weights under no_grad, not a metric)."""
    if not torch.is_grad_enabled():
        return False
    for value in (*args, *(kwargs or {}).values()):
        if isinstance(value, torch.Tensor) and value.requires_grad:
            return True
    return False


def _skip_dynamo_import() -> None:
    """torch wraps every TorchDispatchMode's __torch_dispatch__ in `torch._disable_dynamo`, which
    imports torch._dynamo (seconds) on the first op only to mark the function "do not trace".
    When the program has not imported dynamo (so nothing can be compiling), mark it ourselves the
    way that wrapper caches its answer, and the import never happens."""
    if "torch._dynamo" in sys.modules:
        return
    raw = getattr(OpCounter.__dict__["__torch_dispatch__"], "__wrapped__", None)
    if raw is not None and getattr(raw, "__dynamo_disable", None) is None:
        raw.__dynamo_disable = raw


def _compiled_frames() -> int:
    """Frames (graphs) torch.compile has compiled in this process so far."""
    dynamo = sys.modules.get("torch._dynamo")  # look, never import
    counters = getattr(getattr(dynamo, "utils", None), "counters", None)
    if not counters:
        return 0
    frames = counters["frames"].get("ok", 0)  # torch < 2.6
    return int(frames or counters["stats"].get("unique_graphs", 0))


class SamplingProbe(Probe):
    def install(self, patcher) -> None:
        self.counter: OpCounter | None = None
        self.calls: PythonCallCounter | None = None
        self.done = False
        self.sampled: StepRecord | None = None
        self.skipped = False  # the program uses torch.compile: nothing is counted
        self.skipped_in_backward = False  # its steps end inside a backward: nothing is counted
        self.frames_before = _compiled_frames()  # compiled before us (an earlier watch())
        self.frames_seen = self.frames_before
        self.compile_called = False  # torch.compile was called while we watched
        patcher.replace(torch, "compile", self._wrap_compile)
        # autograd runs a custom Function's backward through this method, inside backward()'s
        # handler where the counting mode is off: its torch calls are the program's Python (a
        # loop over rows in a hand-written backward is a Python loop, rule D203)
        patcher.replace(BackwardCFunction, "apply", self._wrap_custom_backward)

    def _wrap_custom_backward(self, original):
        probe = self

        def apply(node, *args):
            calls = probe.calls
            # on already (a backward not started through a torch function): once is enough
            if calls is None or probe.done or calls in _get_current_function_mode_stack():
                return original(node, *args)
            with calls:
                return original(node, *args)

        return apply

    def on_step_end(self, record) -> None:
        frames = _compiled_frames()  # a few dict look-ups: counts recompiles step by step
        if frames != self.frames_seen:
            record.compiles = frames - self.frames_seen
            self.frames_seen = frames
        if not self.session.config.count_ops:
            return
        if record.index == self.session.sampled_index - 1 and not (self.done or self.active):
            if self._program_compiles():
                self.skipped = True
                return
            if torch._C._current_graph_task_id() != -1:
                # the step ends inside a backward (an optimizer stepped in a gradient hook): the
                # autograd engine puts the thread's mode stacks back when the backward ends, so a
                # mode pushed here is gone before its __exit__ (and one popped here comes back)
                self.skipped_in_backward = True
                return
            self._start()
        elif record.index == self.session.sampled_index and self.active:
            self._finish()
            self.sampled = record  # its evaluation spans may still be settled later

    def _program_compiles(self) -> bool:
        """torch.compile is in use: then no dispatch mode may be pushed. Dynamo does not trace a
        frame under an active dispatch mode (with fullgraph=True it raises) and from then on runs
        that code eagerly for good, so every measured step would describe a different, uncompiled
        program. A program that called torch.compile may first run its compiled code in the
        sampled step itself: that counts as compiling too."""
        return (
            self.compile_called
            or self.session.compiled_model_seen
            or _compiled_frames() > self.frames_before
        )

    def _wrap_compile(self, original):
        probe = self

        def compile(*args, **kwargs):
            probe.compile_called = True
            return original(*args, **kwargs)

        return compile

    @property
    def active(self) -> bool:
        return self.counter is not None and not self.done

    def _start(self) -> None:
        _skip_dynamo_import()
        self.counter = OpCounter(self.tracker.stack, self.tracker.clock)
        self.counter.__enter__()
        self.calls = PythonCallCounter(
            self.tracker.stack, self.tracker.clock, self.tracker.torch_call_outside
        )
        self.calls.__enter__()

    def _leave(self) -> None:
        if self.calls is not None:
            self.calls.__exit__(None, None, None)
        self.counter.__exit__(None, None, None)

    def _finish(self) -> None:
        self._leave()
        self.done = True

    def stop(self) -> None:
        if self.active:  # the run ended inside the sampled step: counts are partial, drop them
            self._leave()
            self.counter = None

    def contribute(self, run, measured) -> None:
        if self.skipped:
            run.notes.append(
                "op, FLOP and float64 counts skipped: the program uses torch.compile, and the "
                "op-counting dispatch mode would make compiled code fall back to eager for good"
            )
        if self.skipped_in_backward:
            run.notes.append(
                "op, FLOP and float64 counts skipped: the program's optimizer steps inside "
                "backward (a gradient hook), where no dispatch mode can be pushed and popped"
            )
        if not self.done or self.counter is None:
            return
        if self.counter.flop_errors:
            run.notes.append(
                "FLOPs not counted for: " + ", ".join(sorted(self.counter.flop_errors))
            )
        run.precision.float64_ops = self.counter.float64
        run.precision.float32_ops = self.counter.float32
        run.precision.low_precision_ops = self.counter.low_precision
        run.compute.ops_per_step = float(self.counter.ops)
        run.compute.data_ops_per_step = float(self.counter.data_ops)
        run.compute.optimizer_ops_per_step = float(self.counter.optimizer_ops)
        spans = self.sampled.eval_spans if self.sampled is not None else []
        run.compute.evaluation_ops_per_step = float(_within(self.counter.times, spans))
        if self.calls is not None:
            run.compute.python_calls_per_step = float(self.calls.calls)
            run.compute.evaluation_python_calls_per_step = float(_within(self.calls.times, spans))
        run.compute.flops_per_step = float(self.counter.flops)
        counter = self.counter
        ranked = sorted(counter.by_op, key=lambda p: (-counter.by_op[p], -counter.flops_by_op[p]))
        run.compute.top_ops = [
            OpCount(str(p), counter.by_op[p], float(counter.flops_by_op[p]))
            for p in ranked[:TOP_OPS]
        ]


def _within(times: array, spans: list[tuple[float, float]]) -> int:
    """How many of the (ascending) `times` fall inside the spans."""
    return sum(bisect.bisect_right(times, b) - bisect.bisect_left(times, a) for a, b in spans)
