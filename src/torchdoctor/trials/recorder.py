"""What a trial worker measures per training step: wall time, CPU time, samples, loss.

Steps are diagnose's steps: the worker runs the script under a diagnose `Session`, whose
`StepTracker` decides where a step ends (the last optimizer of the iteration's cycle, so a GAN's
two optimizer steps are one step; `backward()` in a script without a torch optimizer), and the
recorder listens to it. `--steps 20` is therefore the same 20 iterations in the diagnosis and in
its trials. A step's wall time runs from the previous step's end to its own, evaluation and epoch
boundaries included (a fix that speeds evaluation shows). The loss of a step is the sum of the
values of the tensors `backward()` was called on during it, so the semantics check needs nothing
from the script. Reading it costs one sync per backward, paid alike by the baseline and every
variant.

Warm-up prefetch: DataLoader workers keep up to `num_workers x prefetch_factor` batches in flight.
While a slow warm-up runs (compilation, worker start-up), they fill that queue, and the first
steps after warm-up then consume ready batches in ~0 s: a data-bound script would look fast. So
the recorder runs that many extra steps (the largest queue of any loader the script built) and the
statistics discard them (`prefetch_steps` in the result): only steps after the queue drained are
timed. Loaders without workers prefetch nothing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch

from torchdoctor.diagnose.session import Session
from torchdoctor.diagnose.steps import StepRecord as TrackedStep
from torchdoctor.intercept.hooks import Hooks


@dataclass
class StepRecord:
    wall_s: float
    cpu_s: float  # CPU time of the training process (all its threads), not of loader workers
    samples: int | None
    loss: float | None
    # wall seconds of the step's phases (diagnose's: forward, backward, optimizer, data, ...;
    # evaluation cut out): the phase a fix acts on, timed alone (stats.phase_speedups)
    phases: dict[str, float] = field(default_factory=dict)


@dataclass
class StepRecorder:
    max_steps: int  # warm-up + measured steps; prefetch_steps are run on top of these
    steps: list[StepRecord] = field(default_factory=list)
    _started: float = field(default_factory=time.perf_counter)
    _started_cpu: float = field(default_factory=time.process_time)
    _losses: list[float] = field(default_factory=list)
    _session: Session | None = None
    prefetch_steps: int = 0  # the largest prefetch queue (batches) of any loader with workers
    # A training forward ran a Dropout layer with p > 0: the losses depend on its random masks.
    dropout_active: bool = False
    _checked: set[int] = field(default_factory=set)  # models whose layers were looked at
    loss_on_cuda: bool = False  # a backward's loss was a CUDA tensor: the program trains on CUDA

    def attach(self, hooks: Hooks, session: Session) -> None:
        self._session = session
        session.tracker.on_step_end.append(self._end_step)
        hooks.around_forward.insert(0, self._note_dropout)
        hooks.on_backward.append(self._record_loss)
        hooks.loader_kwargs.append(dict)  # unchanged: makes every loader reach on_loader
        hooks.on_loader.append(self._note_prefetch)

    def _note_prefetch(self, _loader, _given: dict, final: dict) -> None:
        workers = final.get("num_workers") or 0
        if workers > 0:
            queue = workers * (final.get("prefetch_factor") or 2)  # torch's default factor: 2
            self.prefetch_steps = max(self.prefetch_steps, queue)

    def _note_dropout(self, module, call, args, kwargs):
        if not self.dropout_active and torch.is_grad_enabled() and module.training:
            if id(module) not in self._checked:  # one walk over the layers per model
                self._checked.add(id(module))
                self.dropout_active = _has_active_dropout(module)
        return call(module, args, kwargs)

    def _record_loss(self, loss: torch.Tensor) -> None:
        self.loss_on_cuda = self.loss_on_cuda or loss.is_cuda
        if loss.numel() == 1:
            self._losses.append(float(loss.detach()))  # full precision (float64 stays float64)

    def _end_step(self, record: TrackedStep) -> None:
        session = self._session
        if session is not None and session.stopped:  # the script caught our stop: insist
            session.stop_program()
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            torch.cuda.synchronize()
        now, now_cpu = time.perf_counter(), time.process_time()
        loss = sum(self._losses) if self._losses else None
        self.steps.append(
            StepRecord(
                now - self._started,
                now_cpu - self._started_cpu,
                record.batch_size,
                loss,
                dict(record.phases),
            )
        )
        self._started, self._started_cpu, self._losses = now, now_cpu, []
        if len(self.steps) >= self.max_steps + self.prefetch_steps and session is not None:
            session.stop_program()


def _has_active_dropout(module: torch.nn.Module) -> bool:
    return any(
        isinstance(layer, torch.nn.modules.dropout._DropoutNd) and layer.training and layer.p > 0
        for layer in module.modules()
    )
