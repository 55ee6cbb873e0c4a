"""What a trial worker measures per training step: wall time, samples, loss.

A step ends at each `optimizer.step()` (or, in a script without a torch optimizer, at each
`backward()`). The loss of a step is the value of the tensor(s) `backward()` was called on, so the
semantics check needs nothing from the script. Reading it costs one sync per backward, paid alike
by the baseline and every variant.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch

from torchdoctor.trials.hooks import TrialHooks


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
    max_steps: int
    steps: list[StepRecord] = field(default_factory=list)
    _started: float = field(default_factory=time.perf_counter)
    _started_cpu: float = field(default_factory=time.process_time)
    _losses: list[float] = field(default_factory=list)
    _samples: int = 0
    _hooks: TrialHooks | None = None

    def attach(self, hooks: TrialHooks) -> None:
        self._hooks = hooks
        hooks.around_forward.insert(0, self._count_samples)
        hooks.on_backward.append(self._record_loss)
        hooks.on_step.append(self._end_step)

    def _count_samples(self, module, call, args, kwargs):
        if torch.is_grad_enabled() and module.training:
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
            StepRecord(now - self._started, now_cpu - self._started_cpu, self._samples or None, loss)
        )
        self._started, self._started_cpu, self._losses, self._samples = now, now_cpu, [], 0
        if len(self.steps) >= self.max_steps:
            raise StopTrial()
