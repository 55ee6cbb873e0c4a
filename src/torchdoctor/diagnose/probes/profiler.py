"""`--profile`: a short torch.profiler window over a few steps outside the measurement.

The profiler slows the steps it covers and its teardown lands in the next step, so the window
runs after the measured steps, or before them when the program runs to its end (the session
places it). On CUDA it measures the time kernels kept the device busy per step, so every measured
step gets `gpu_idle_s` (its unperturbed wall minus that busy time); on CPU it names the most
expensive ops in a note. When the program runs its own torch.profiler at that moment, ours
steps aside (two profilers cannot run at once) and the report says so.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import warnings

import torch

from torchdoctor.diagnose.probes.base import Probe
from torchdoctor.diagnose.probes.memory_reading import cuda_in_use

WINDOW = 3  # profiled steps
# kineto writes one `USDT:... profiler_start` / `profiler_stop` line to fd 2 from C++ at each
# start and stop, whatever its log level, and a CUDA build of torch on a machine without a GPU
# driver (the default Linux wheel on a CPU machine) logs `gpuGetDeviceCount failed with code
# 35` at start: our tool's noise in the user's stderr
KINETO_NOISE = (b"USDT:", b"gpuGetDeviceCount failed")
# torch >= 2.11 warns at every profiler start without acc_events=True that events are cleared at
# each cycle's end: ours has one cycle, and the warning read as the program's
CYCLE_WARNING = "Warning: Profiler clears events at the end of each cycle"


@contextlib.contextmanager
def _without_kineto_noise():
    """Hold fd 2 for the (short) start or stop call; pass on every line but kineto's (and
    torch's warning about our profiler's settings)."""
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no fd 2 (a detached process): nothing to filter
        yield
        return
    with tempfile.TemporaryFile() as held, warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=CYCLE_WARNING, category=UserWarning)
        os.dup2(held.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            held.seek(0)
            lines = held.read().splitlines(True)
            kept = [line for line in lines if not any(noise in line for noise in KINETO_NOISE)]
            if kept:
                os.write(2, b"".join(kept))


class ProfilerProbe(Probe):
    def install(self, patcher) -> None:
        self.profiler = None
        self.profiled: list[int] = []
        self.busy_s: float | None = None
        self.top_ops: list[str] = []
        self.stepped_aside = False  # the program's own profiler was running
        self.cuda = False  # the window profiles CUDA too (the program had initialised it)

    def reacts_to_steps(self) -> bool:
        return self.session.config.profile

    def on_step_end(self, record) -> None:
        session = self.session
        if record.index == session.profile_start - 1:
            if torch.autograd._profiler_enabled():
                self.stepped_aside = True
                return
            activities = [torch.profiler.ProfilerActivity.CPU]
            # CUDA's activity only for a program that uses CUDA: on a machine with a GPU, a CPU
            # program got a CUDA context from our profiler and every step a GPU idle time (its
            # wall time, no kernel having run)
            self.cuda = cuda_in_use()
            if self.cuda:
                activities.append(torch.profiler.ProfilerActivity.CUDA)
            self.profiler = torch.profiler.profile(activities=activities)
            with _without_kineto_noise():
                self.profiler.__enter__()
        elif self.profiler is not None:
            self.profiled.append(record.index)
            if len(self.profiled) >= WINDOW:
                self._finish()

    def _finish(self) -> None:
        profiler, self.profiler = self.profiler, None
        with _without_kineto_noise():
            profiler.__exit__(None, None, None)
        averages = profiler.key_averages()
        if self.cuda:
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
        if self.stepped_aside:
            run.notes.append(
                "--profile: nothing profiled, the program was running its own torch.profiler "
                "(one profiler at a time)"
            )
            return
        if not self.profiled:
            run.notes.append(
                "--profile: the program ended before the profiled steps, nothing was profiled"
            )
            return
        if self.busy_s is not None:
            busy = self.busy_s / len(self.profiled)  # device time per step, profiler or not
            for step in run.steps:
                step.gpu_idle_s = max(0.0, step.wall_s - busy)
        run.notes.append(
            f"--profile covered steps {self.profiled[0]}-{self.profiled[-1]}, outside the "
            "measured steps (the profiler slows them); top ops by self CPU time: "
            + ", ".join(self.top_ops)
        )
