"""Device-true phase times on CUDA: a CUDA event at every phase transition of measured steps.

The host times of the tracker say when the host *issued* work; on an asynchronous device the
forward may be issued in 2 ms and run for 20. Events recorded on the current stream at the same
transitions give, per phase, the device time between them. They are read after the run, so no
sync is added. Evaluation spans are not cut out of device times. Without CUDA this probe is idle,
and so it is while the program has not initialized CUDA itself: a CPU program on a machine with
a GPU must not get a CUDA context (hundreds of MiB of GPU memory, seconds) from our events, nor
pay for them at every phase.
"""

from __future__ import annotations

import torch

from torchdoctor.diagnose.probes.base import Probe
from torchdoctor.diagnose.probes.memory_reading import cuda_in_use


def phase_times(marks: list) -> dict[str, float]:
    """Seconds per phase from [(phase starting here, event), ...]: each gap between consecutive
    events belongs to the phase that started at the earlier one."""
    phases: dict[str, float] = {}
    for (phase, start), (_, end) in zip(marks, marks[1:]):
        phases[phase] = phases.get(phase, 0.0) + start.elapsed_time(end) / 1000.0
    return phases


class CudaPhaseProbe(Probe):
    def install(self, patcher) -> None:
        self.enabled = torch.cuda.is_available()
        self.current: list = []
        self.per_step: dict[int, list] = {}  # step index -> [(phase, event), ...]

    def _mark(self, phase: str) -> None:
        event = torch.cuda.Event(enable_timing=True)
        event.record()
        self.current.append((phase, event))

    def reacts_to_steps(self) -> bool:
        return self.enabled  # CUDA available at install (it cannot appear later)

    def on_step_end(self, record) -> None:
        if not cuda_in_use():  # a flag read: the program has not touched CUDA (yet)
            return
        forwards = record.training_forwards
        if forwards and forwards[0].shape is not None and forwards[0].device_type == "cpu":
            # the step's forward took a CPU tensor: CUDA was initialised by other code (an
            # earlier test, a notebook cell), the program trains on the CPU: no events for it
            self._unlisten()
            self.current = []
            return
        if self.current:
            self._mark("other")  # the closing boundary of the step
            self.per_step[record.index] = self.current
        self.current = []
        session = self.session
        upcoming = record.index + 1
        last = session.first_measured + (session.config.steps or 10**9) - 1
        if session.first_measured <= upcoming <= last:
            if self._mark not in self.tracker.phase_listeners:
                self.tracker.phase_listeners.append(self._mark)
            self._mark("other")
        else:
            self._unlisten()

    def stop(self) -> None:
        self._unlisten()

    def _unlisten(self) -> None:
        if self._mark in self.tracker.phase_listeners:
            self.tracker.phase_listeners.remove(self._mark)

    def contribute(self, run, measured) -> None:
        if not self.per_step:
            return
        torch.cuda.synchronize()
        by_index = {step.index: step for step in run.steps}
        for index, marks in self.per_step.items():
            step = by_index.get(index)
            if step is None:
                continue
            step.device_phases = phase_times(marks)
