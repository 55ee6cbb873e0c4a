"""What a trial worker measures per training step: wall time, samples, loss.

A step ends at each `optimizer.step()` (or, in a script without a torch optimizer, at each
`backward()`). The loss of a step is the value of the tensor(s) `backward()` was called on, so the
semantics check needs nothing from the script. Reading it costs one sync per backward, paid alike
by the baseline and every variant.

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

from torchdoctor.intercept.hooks import Hooks


class StopTrial(BaseException):
    """Raised from inside the script once enough steps ran (BaseException: `except Exception`
    in the user's script does not swallow it)."""


@dataclass
class StepRecord:
    wall_s: float
    cpu_s: float  # CPU time of the training process (all its threads), not of loader workers
    samples: int | None
    loss: float | None


@dataclass
class StepRecorder:
    max_steps: int  # warm-up + measured steps; prefetch_steps are run on top of these
    steps: list[StepRecord] = field(default_factory=list)
    _started: float = field(default_factory=time.perf_counter)
    _started_cpu: float = field(default_factory=time.process_time)
    _losses: list[float] = field(default_factory=list)
    _samples: int = 0
    _hooks: Hooks | None = None
    prefetch_steps: int = 0  # the largest prefetch queue (batches) of any loader with workers
    # A training forward ran a Dropout layer with p > 0: the losses depend on its random masks.
    dropout_active: bool = False

    def attach(self, hooks: Hooks) -> None:
        self._hooks = hooks
        hooks.around_forward.insert(0, self._count_samples)
        hooks.on_backward.append(self._record_loss)
        hooks.on_step.append(self._end_step)
        hooks.loader_kwargs.append(dict)  # unchanged: makes every loader reach on_loader
        hooks.on_loader.append(self._note_prefetch)

    def _note_prefetch(self, _loader, _given: dict, final: dict) -> None:
        workers = final.get("num_workers") or 0
        if workers > 0:
            queue = workers * (final.get("prefetch_factor") or 2)  # torch's default factor: 2
            self.prefetch_steps = max(self.prefetch_steps, queue)

    def _count_samples(self, module, call, args, kwargs):
        if torch.is_grad_enabled() and module.training:
            if not self.dropout_active:
                self.dropout_active = _has_active_dropout(module)
            first = next((a for a in args if isinstance(a, torch.Tensor) and a.dim() > 0), None)
            if first is not None:
                self._samples += int(first.shape[0])
        return call(module, args, kwargs)

    def _record_loss(self, loss: torch.Tensor) -> None:
        if loss.numel() == 1:
            self._losses.append(float(loss.detach()))  # full precision (float64 stays float64)
        if self._hooks is not None and not self._hooks.optimizers:
            self._end_step(None)  # no optimizer: a backward is a step

    def _end_step(self, _optimizer) -> None:
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            torch.cuda.synchronize()
        now, now_cpu = time.perf_counter(), time.process_time()
        loss = sum(self._losses) if self._losses else None
        self.steps.append(
            StepRecord(
                now - self._started, now_cpu - self._started_cpu, self._samples or None, loss
            )
        )
        self._started, self._started_cpu, self._losses, self._samples = now, now_cpu, [], 0
        if len(self.steps) >= self.max_steps + self.prefetch_steps:
            raise StopTrial()


def _has_active_dropout(module: torch.nn.Module) -> bool:
    return any(
        isinstance(layer, torch.nn.modules.dropout._DropoutNd) and layer.training and layer.p > 0
        for layer in module.modules()
    )
