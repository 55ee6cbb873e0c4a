"""Habits probe: debugging modes left on and training-loop habits that cost time, each measured.

- The program's own torch.profiler recording during measured steps (our `--profile` window is
  not the program's), and anomaly detection: their cost is measured, not assumed. A small
  forward+backward (a few matmuls, no nn.Module, so no probe sees it) is timed when the probe is
  installed (modes off) and again at the end of the step before the sampled one when a mode is
  on: the sampled step is never measured, so the benchmark costs no measured step anything.
- `backward(retain_graph=True)` followed by another backward through the same graph, timed:
  with no model forward between, or after one when the later backward's graph walks back into
  the retained one (a GAN's discriminator loss on a generator output not detached, whose
  generator step then reuses it); the graphs' nodes are compared, not guessed from the code.
- Activation checkpointing: the time the checkpointed functions take when re-run inside
  backward (the recompute), per step.
"""

from __future__ import annotations

import os
import sys
import time

import torch
import torch.utils.checkpoint
from torch.utils._python_dispatch import _disable_current_modes

from torchdoctor.diagnose.callsite import installed_package, user_location
from torchdoctor.diagnose.probes.activations import not_counted
from torchdoctor.diagnose.probes.backward import backward_probe
from torchdoctor.diagnose.probes.base import Probe, per_step
from torchdoctor.diagnose.probes.profiler import ProfilerProbe

_GRAD = torch.autograd.grad  # before any probe patches it: the benchmark is not a user backward
_OURS = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep
BENCH_REPEATS = 20
BENCH_ROUNDS = 3  # best of
# torch.profiler.profile's options that make it record more per op
PROFILER_OPTIONS = ("record_shapes", "profile_memory", "with_stack", "with_flops", "with_modules")
BENCH_OPS = BENCH_REPEATS * 11  # aten ops per run: 5 forward (mm, tanh, mm, tanh, sum), ~6 backward
# autograd nodes of a retained graph kept to compare with the next backward's (a walk's bound)
GRAPH_NODES_MAX = 20_000


def graph_nodes(tensors, limit: int = GRAPH_NODES_MAX, stop: set | None = None) -> set:
    """The autograd nodes reachable from `tensors` (a tensor or a sequence of them), breadth
    first, at most `limit`, without the parameters' AccumulateGrad leaves (every graph through
    a parameter shares its leaf). With `stop`, the walk ends at the first node in it and returns
    that node alone: the graph reaches into `stop`'s graph."""
    roots = tensors if isinstance(tensors, (list, tuple)) else [tensors]
    frontier = [t.grad_fn for t in roots if isinstance(t, torch.Tensor) and t.grad_fn is not None]
    seen: set = set()
    while frontier and len(seen) < limit:
        node = frontier.pop()
        if node in seen or type(node).__name__ == "AccumulateGrad":
            continue
        if stop is not None and node in stop:
            return {node}
        seen.add(node)
        frontier.extend(n for n, _ in node.next_functions if n is not None)
    return set() if stop is not None else seen


def _bench_once() -> float:
    weight = torch.full((64, 64), 0.01, requires_grad=True)
    x = torch.ones(16, 64)
    with not_counted():  # the memory probe counts the program's saved tensors, not these
        started = time.perf_counter()
        for _ in range(BENCH_REPEATS):
            h = torch.tanh(x @ weight)
            h = torch.tanh(h @ weight)
            _GRAD(h.sum(), weight)
        return time.perf_counter() - started


def benchmark() -> float:
    """Seconds for a small forward+backward, best of BENCH_ROUNDS (a busy machine slows some).

    Our own op-counting modes (the sampling probe enters them at the same step end, just before)
    are suspended: the benchmark compares the program's mode with and without, nothing else."""
    with torch._C.DisableTorchFunction(), _disable_current_modes():
        return min(_bench_once() for _ in range(BENCH_ROUNDS))


def _calling_package(frame) -> str | None:
    """The installed package whose code called checkpoint, looking past torch's own callers
    (`checkpoint_sequential`) and our other wrappers; None when it is the program's code."""
    while frame is not None:
        package = installed_package(frame.f_code.co_filename)
        if package != "torch" and not frame.f_code.co_filename.startswith(_OURS):
            return package
        frame = frame.f_back
    return None


_profiler_enabled = torch._C._autograd._profiler_enabled  # a C function


class HabitsProbe(Probe):
    def install(self, patcher) -> None:
        self.baseline_s = benchmark()
        self.profiler_steps = 0
        self.steps_seen = 0
        self.profiler_op_s: float | None = None
        self.anomaly_op_s: float | None = None
        self.retained_at: int | None = None  # forwards seen when a retain_graph backward ran
        self.retained_root = None  # that backward's loss (its graph; dropped at the next one)
        self.retained_location = ""  # and its line
        self.locations: dict[str, int] = {}
        self.checkpoint_packages: set[str] = set()
        self.ours = next((p for p in self.session.probes if isinstance(p, ProfilerProbe)), None)
        backward = backward_probe(self.session)
        if backward is not None:
            backward.after.append(self._backward_done)
        patcher.replace(torch.utils.checkpoint, "checkpoint", self._wrap_checkpoint)
        self.profiler_options: list[str] = []  # of the program's last torch.profiler started
        if isinstance(torch.profiler.profile, type):  # `--try profiler_off` swaps in its own
            patcher.replace(torch.profiler.profile, "start", self._wrap_profiler_start)

    # -- a second backward through a retained graph ---------------------------------------------
    def _backward_done(self, args, kwargs, seconds: float) -> None:
        forwards = self.tracker.forwards_seen
        if self.retained_at is not None:
            same_forward = self.retained_at == forwards
            # the graphs are walked only here, after a forward (a multi-task step with no
            # forward between its backwards walks nothing)
            if same_forward or graph_nodes(args[0], stop=graph_nodes(self.retained_root)):
                counters = self.tracker.counters
                counters["second_backwards"] = counters.get("second_backwards", 0) + 1
                counters["second_backward_s"] = counters.get("second_backward_s", 0) + seconds
                if not same_forward:
                    counters["reused_after_forward"] = counters.get("reused_after_forward", 0) + 1
                if self.session.measuring:
                    # after a forward the line to change is the retaining backward's (its loss
                    # is the one that should have stopped at a detached tensor)
                    location = user_location(2) if same_forward else self.retained_location
                    self.locations[location] = self.locations.get(location, 0) + 1
        retain = kwargs.get("retain_graph")
        if retain is None and len(args) >= 3:  # Tensor.backward(gradient, retain_graph)
            retain = args[2] if isinstance(args[0], torch.Tensor) else None
        self.retained_at = forwards if retain else None
        self.retained_root = args[0] if retain else None
        self.retained_location = user_location(2) if retain and self.session.measuring else ""

    # -- activation checkpointing's recompute -----------------------------------------------------
    def _wrap_checkpoint(self, original):
        tracker = self.tracker
        packages = self.checkpoint_packages

        def checkpoint(function, *args, **kwargs):
            package = _calling_package(sys._getframe(1))
            if package:
                packages.add(package)

            def timed(*inner, **inner_kwargs):
                if "backward" not in tracker.stack:
                    return function(*inner, **inner_kwargs)
                started = time.perf_counter()
                try:
                    return function(*inner, **inner_kwargs)
                finally:
                    counters = tracker.counters
                    spent = time.perf_counter() - started
                    counters["recompute_s"] = counters.get("recompute_s", 0) + spent

            return original(timed, *args, **kwargs)

        return checkpoint

    # -- debugging modes --------------------------------------------------------------------------
    def _wrap_profiler_start(self, original):
        """Note what the program's profiler records (once per start; the what-if replays it)."""
        probe = self

        def start(profiler, *args, **kwargs):
            ours = probe.ours is not None and profiler is probe.ours.profiler
            if not ours:
                probe.profiler_options = [
                    name for name in PROFILER_OPTIONS if getattr(profiler, name, False)
                ]
            return original(profiler, *args, **kwargs)

        return start

    def _program_profiler_on(self) -> bool:
        ours = self.ours is not None and self.ours.profiler is not None
        return bool(_profiler_enabled()) and not ours

    def on_step_end(self, record) -> None:
        session = self.session
        if record.index == session.sampled_index - 1:  # its time lands in the sampled step
            profiler, anomaly = self._program_profiler_on(), torch.is_anomaly_enabled()
            if profiler or anomaly:
                extra = max(0.0, benchmark() - self.baseline_s) / BENCH_OPS
                if profiler:
                    self.profiler_op_s = extra
                else:
                    self.anomaly_op_s = extra
        last = session.first_measured + session.config.steps
        if record.index >= session.first_measured and (
            not session.config.steps or record.index < last
        ):
            self.steps_seen += 1
            # the C flag first: with no profiler on (the usual step) no Python call
            self.profiler_steps += bool(_profiler_enabled()) and self._program_profiler_on()

    def contribute(self, run, measured) -> None:
        habits = run.habits
        if self.steps_seen:
            habits.profiler_active_share = self.profiler_steps / self.steps_seen
        habits.profiler_op_overhead_s = self.profiler_op_s
        habits.profiler_options = list(self.profiler_options)
        habits.anomaly_op_overhead_s = self.anomaly_op_s
        habits.retained_backwards_per_step = per_step(measured, "second_backwards")
        habits.second_backward_s_per_step = per_step(measured, "second_backward_s")
        habits.retained_reused_after_forward_per_step = per_step(measured, "reused_after_forward")
        by_count = sorted(self.locations.items(), key=lambda item: -item[1])
        habits.retained_backward_locations = [location for location, _ in by_count]
        if any("recompute_s" in r.counters for r in measured):
            habits.checkpoint_recompute_s_per_step = per_step(measured, "recompute_s")
        habits.checkpoint_caller_packages = sorted(self.checkpoint_packages)
