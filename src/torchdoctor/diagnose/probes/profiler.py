"""`--profile`: a short torch.profiler window over the first measured steps.

On CUDA it measures the time kernels kept the device busy, so each profiled step gets
`gpu_idle_s` (wall minus busy); on CPU it names the most expensive ops in a note. The profiler
slows the steps it covers, which the notes say.
"""

from __future__ import annotations

import torch

from torchdoctor.diagnose.probes.base import Probe

WINDOW = 3  # profiled steps


class ProfilerProbe(Probe):
    def install(self, patcher) -> None:
        self.profiler = None
        self.profiled: list[int] = []
        self.busy_s: float | None = None
        self.top_ops: list[str] = []

    def on_step_end(self, record) -> None:
        session = self.session
        if not session.config.profile:
            return
        if record.index == session.first_measured - 1:
            activities = [torch.profiler.ProfilerActivity.CPU]
            if torch.cuda.is_available():
                activities.append(torch.profiler.ProfilerActivity.CUDA)
            self.profiler = torch.profiler.profile(activities=activities)
            self.profiler.__enter__()
        elif self.profiler is not None:
            self.profiled.append(record.index)
            if len(self.profiled) >= WINDOW:
                self._finish()

    def _finish(self) -> None:
        profiler, self.profiler = self.profiler, None
        profiler.__exit__(None, None, None)
        averages = profiler.key_averages()
        if torch.cuda.is_available():
            sample = averages[0] if len(averages) else None
            attribute = "self_device_time_total"  # torch >= 2.4; older: self_cuda_time_total
            if not hasattr(sample, attribute):
                attribute = "self_cuda_time_total"
            self.busy_s = sum(getattr(e, attribute, 0.0) for e in averages) / 1e6
        ranked = sorted(averages, key=lambda e: -e.self_cpu_time_total)[:5]
        total = sum(e.self_cpu_time_total for e in averages) or 1.0
        self.top_ops = [f"{e.key} {100 * e.self_cpu_time_total / total:.0f}%" for e in ranked]

    def stop(self) -> None:
        if self.profiler is not None:
            self._finish()

    def contribute(self, run, measured) -> None:
        if not self.session.config.profile:
            return
        if not self.profiled:
            run.notes.append("--profile: no measured step ran, nothing was profiled")
            return
        steps = [s for s in run.steps if s.index in self.profiled]
        if self.busy_s is not None and steps:
            busy = self.busy_s / len(self.profiled)
            for step in steps:
                step.gpu_idle_s = max(0.0, step.wall_s - busy)
        run.notes.append(
            f"--profile covered steps {self.profiled[0]}-{self.profiled[-1]} (they run slower); "
            "top ops by self CPU time: " + ", ".join(self.top_ops)
        )
