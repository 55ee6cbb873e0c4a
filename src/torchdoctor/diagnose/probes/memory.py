"""Memory over the run: per-phase memory of one step, activations by module, memory at every
step end, tensors kept alive across steps, and what filled memory when the program ran out.

Costs, and where they are paid:
- step 0 (a warm-up step, never measured): autograd's saved tensors are counted by module
  (activations.py); an out-of-memory crash in that step is explained with them;
- the sampled step (warm-up too): memory is read at each phase transition, through the step
  tracker's phase listeners (CUDA: allocated, reserved and the peak inside each phase);
- every step: one memory read at the step's end; weak references to its loss, its loss's terms
  and its output on the looked-at steps (every step of the first LOOKED_AT_STEPS, then one in
  LOOK_EVERY);
- a handful of checks (the 4th, 8th, 16th... step and the last measured one) of which earlier
  losses and outputs are still alive, and of the sizes of the loop's tensors (also at the 2nd
  step: a growing history) (retention.py).
"""

from __future__ import annotations

import torch

from torchdoctor.diagnose.callsite import user_location
from torchdoctor.diagnose.observations import MemoryPoint, OutOfMemoryObservation
from torchdoctor.diagnose.probes.activations import ActivationCounter
from torchdoctor.diagnose.probes.backward import backward_probe
from torchdoctor.diagnose.probes.base import Probe
from torchdoctor.diagnose.probes.memory_reading import MemoryReader
from torchdoctor.diagnose.probes.out_of_memory import explain, failing_module, is_oom
from torchdoctor.diagnose.probes.retention import RetentionWatch

COUNTED_STEP = 0  # activations by module are counted in the first step
POINTS = ("before_forward", "after_forward", "after_backward", "after_optimizer")
# The loss, its terms (a scan of the calling function's variables, the costliest per-step look
# of this probe) and the output are looked at on every step of a short run, then on one step in
# LOOK_EVERY: a check compares the share of the looked-at steps whose tensors are still alive,
# which a regular subset keeps (steps 0-15 and every 16th after: checks at 4, 8, 16... measured
# steps). Round 9: looking at every step's loss and output and every 4th step's terms was 400 of
# the 4300 bytecode instructions the probes add to a steady MLP step (bench/diagnose_calls.py)
LOOKED_AT_STEPS = 16
LOOK_EVERY = 16
AFTER = {"forward": "after_forward", "backward": "after_backward", "optimizer": "after_optimizer"}


class MemoryTimelineProbe(Probe):
    def install(self, patcher) -> None:
        # process memory until a loss on CUDA is seen (a CPU program stays there, whatever else
        # initialised CUDA in the process)
        self.reader = MemoryReader()
        self.loss_on_cuda = False
        self.counter = ActivationCounter()
        self.counter_skipped = False
        self.step_memory: dict[int, int] = {}
        self.points: dict[str, MemoryPoint] = {}
        self.peaks: dict[str, int] = {}
        self.phase = "other"  # the sampled step's current phase
        self._counting_phase = "other"  # step 0's current phase
        self.phase_step: int | None = None
        self.gradient_bytes: int | None = None
        self.retention = RetentionWatch()
        self.out_of_memory: OutOfMemoryObservation | None = None
        backward = backward_probe(self.session)
        if backward is not None:
            backward.before.append(self._backward_starting)
        patcher.replace(torch, "compile", self._wrap_compile)
        self.tracker.phase_listeners.append(self._counting_listener)
        self.counter.start()

    # -- hooks --------------------------------------------------------------------------------
    def _backward_starting(self, args: tuple, kwargs: dict) -> None:
        tensor = args[0]
        if not isinstance(tensor, torch.Tensor):
            return
        self.loss_on_cuda = tensor.is_cuda
        if tensor.numel() == 1:
            retention = self.retention
            retention.loss_passed(tensor)  # every backward: check_graphs compares the latest
            index = self.tracker.index
            if index < LOOKED_AT_STEPS or index % LOOK_EVERY == 0:
                location = user_location()
                retention.remember("loss", index, tensor, location)
                retention.remember_terms(index, tensor, location)

    def _wrap_compile(self, original):
        """A compiled model is not counted (hooks would change what dynamo runs), so counting
        stops when torch.compile is called, before the compiled code first runs: dynamo warns
        about global module hooks on every call of a compiled module while any is registered,
        and that warning would read as if the program had registered them."""
        probe = self

        def compile(*args, **kwargs):
            if probe.counter.active:
                probe.counter.stop()
                probe.counter_skipped = True
            return original(*args, **kwargs)

        return compile

    def _counting_listener(self, phase: str) -> None:
        """Step 0: a finished backward freed its saved tensors (accumulation: keep the
        largest); a compiled model turns the counting off (hooks would change what it runs)."""
        if self.session.compiled_model_seen and self.counter.active:
            self.counter.stop()
        self.counter_skipped = (
            self.counter_skipped or self.counter.compiled or (self.session.compiled_model_seen)
        )
        if self._counting_phase == "backward" and phase != "backward":
            self.counter.graph_released()
        self._counting_phase = phase

    def _phase_listener(self, phase: str) -> None:
        """The sampled step: read memory at each transition."""
        reader = self.reader
        now = reader.allocated()
        peak = reader.peak_and_reset()
        if peak is not None:
            self.peaks[self.phase] = max(self.peaks.get(self.phase, 0), peak)
        point = MemoryPoint("", now, reader.reserved())
        if phase == "forward" and "before_forward" not in self.points:
            self.points["before_forward"] = _at("before_forward", point)
        if self.phase in AFTER and phase != self.phase:
            self.points[AFTER[self.phase]] = _at(AFTER[self.phase], point)  # the last one counts
            if self.phase == "backward":
                self.gradient_bytes = _gradient_bytes(self.session.last_model)
        self.phase = phase

    def on_step_end(self, record) -> None:
        if not self.reader.cuda and (self.loss_on_cuda or _forward_on_cuda(record)):
            self.reader.close()
            self.reader = MemoryReader(cuda=True)  # the program trains on CUDA
        now = self.reader.allocated()
        if now is not None:
            self.step_memory[record.index] = now
        index = record.index
        if (index < LOOKED_AT_STEPS or index % LOOK_EVERY == 0) and record.training_forwards:
            forward = record.training_forwards[0]
            output = forward.output_ref() if forward.output_ref is not None else None
            if output is not None:
                self.retention.remember("output", index, output, forward.location)
        if index == COUNTED_STEP:
            self._stop_counting()
        if index == self.session.sampled_index - 1:
            self._start_phases(record.index + 1)
        elif index == self.phase_step:
            self._finish_phases()
        if self._check_due(index):
            self.retention.check(index)
            self.retention.check_growth(index)
            if index == self._last_measured() or not self.session.config.steps:
                self.retention.check_graphs(index)  # walks graphs: not inside measured steps
        elif index == self.session.first_measured - 1:  # the last warm-up step
            self.retention.check_graphs(index, baseline=True)  # what a growing graph grew from
        elif index == self.session.first_measured + 1:
            # the sizes alone at the 2nd measured step: with the 4th and the 8th, a run of 8
            # steps has the three readings a growing history needs (retention.MIN_GROWING_CHECKS)
            self.retention.check_growth(index)

    def _last_measured(self) -> int | None:
        steps = self.session.config.steps
        return self.session.first_measured + steps - 1 if steps else None

    def _check_due(self, index: int) -> bool:
        first, steps = self.session.first_measured, self.session.config.steps
        since = index - first + 1
        # the last measured step (_last_measured(), spelled out: this runs at every step end)
        return (since >= 4 and since & (since - 1) == 0) or (bool(steps) and since == steps)

    def _stop_counting(self) -> None:
        self.counter.stop()  # also takes its hooks off, once on the thread that put them on
        self.counter_skipped = self.counter_skipped or self.counter.compiled
        if self._counting_listener in self.tracker.phase_listeners:
            self.tracker.phase_listeners.remove(self._counting_listener)

    def _start_phases(self, step: int) -> None:
        self.phase_step = step
        self.phase = "other"
        self.reader.peak_and_reset()
        # Once: the step before the sampled one can close twice. watch() on an optimizer made
        # before it closes steps at backward() until the first optimizer.step(), then counts
        # again from 0 (session.optimizer_step_done). Two micro-batches accumulated per update
        # started the phases twice and finished them once, and the listener read memory at
        # every phase transition of the run (an RL step: a hundred reads).
        if self._phase_listener not in self.tracker.phase_listeners:
            self.tracker.phase_listeners.append(self._phase_listener)

    def _finish_phases(self) -> None:
        self._phase_listener("other")
        if "after_optimizer" not in self.points and self.points:
            self.points["after_optimizer"] = _at(
                "after_optimizer", MemoryPoint("", self.reader.allocated(), self.reader.reserved())
            )
        if self._phase_listener in self.tracker.phase_listeners:
            self.tracker.phase_listeners.remove(self._phase_listener)

    def on_crash(self, exc: BaseException) -> None:
        if not is_oom(exc):
            return
        device = "cuda" if isinstance(exc, torch.cuda.OutOfMemoryError) else "cpu"
        observation = explain(exc, device)
        observation.step = self.tracker.index
        if self.counter.active:  # died in the counted step: its saved tensors so far
            observation.activations_bytes = self.counter.total_bytes()
        observation.module = _module_name(failing_module(exc), self.session.last_model)
        if device == "cuda" and observation.allocated_bytes is None and self.reader.cuda:
            observation.allocated_bytes = torch.cuda.memory_allocated()
        self.out_of_memory = observation

    def stop(self) -> None:
        self._stop_counting()
        self.reader.close()
        if self._phase_listener in self.tracker.phase_listeners:
            self.tracker.phase_listeners.remove(self._phase_listener)

    # -- result -------------------------------------------------------------------------------
    def contribute(self, run, measured) -> None:
        memory = run.memory
        if self.reader.cuda and memory.peak_bytes is not None:
            memory.peak_bytes = max(memory.peak_bytes, self.reader.peak_seen)
        memory.step_source = "cuda_allocated" if self.reader.cuda else "process_rss"
        for step in run.steps:
            step.memory_bytes = self.step_memory.get(step.index)
        if self.points and self.phase_step is not None:
            memory.phase_step = self.phase_step
            memory.phase_source = self.reader.source
            memory.phases = [self.points[p] for p in POINTS if p in self.points]
            memory.phase_peaks = dict(self.peaks) if self.reader.cuda else {}
        memory.gradient_bytes = self.gradient_bytes
        if not self.counter_skipped and self.counter.total_bytes():
            memory.saved_activation_bytes = self.counter.total_bytes()
            memory.activations_by_module = self.counter.by_module()
        elif self.counter_skipped:
            run.notes.append(
                "activations by module not counted: the program uses torch.compile "
                "(saved-tensor hooks would change the compiled program)"
            )
        memory.retained = self.retention.results()
        memory.growing = self.retention.growing_results()
        memory.heap_in_use = self.retention.heap_in_use
        if self.out_of_memory is not None:
            oom = self.out_of_memory
            if oom.capacity_bytes is None:
                oom.capacity_bytes = memory.capacity_bytes
            memory.out_of_memory = oom


def _forward_on_cuda(record) -> bool:
    """The step's first training forward took a CUDA tensor (a step with no backward seen)."""
    forwards = record.training_forwards
    return bool(forwards) and forwards[0].device_type == "cuda"


def _at(name: str, point: MemoryPoint) -> MemoryPoint:
    return MemoryPoint(name, point.allocated_bytes, point.reserved_bytes)


def _gradient_bytes(model) -> int | None:
    if model is None:
        return None
    return sum(
        p.grad.numel() * p.grad.element_size() for p in model.parameters() if p.grad is not None
    )


def _module_name(module, root) -> str | None:
    """ "attn (Attention)": the module's qualified name in the root model, and its class."""
    if module is None:
        return None
    class_name = type(module).__name__
    if root is not None:
        for name, candidate in root.named_modules():
            if candidate is module:
                return f"{name} ({class_name})" if name else class_name
    return class_name
