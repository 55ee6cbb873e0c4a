"""Per-step end times and DataLoader wait during a Trainer run, from diagnose's step tracker.

One definition of a step for diagnose, `--try` and `tune`: the clock runs the Trainer under a
diagnose `Session` (no op counting, never stopping the run) and reads its `StepTracker`: a step
ends at the last optimizer of the iteration's cycle, and its data wait is the time in the "data"
phase (the DataLoader's `next()`, and `iter()` with its workers' start-up). Throughput and
data-wait share are computed after `warmup` steps, so worker start-up and first-step costs are
excluded.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from torchdoctor.diagnose.session import DiagnoseConfig, Session


@dataclass
class StepClock:
    ends: list[float] = field(default_factory=list)  # seconds at each step's end
    waits: list[float] = field(default_factory=list)  # data wait during each step
    _session: Session | None = None

    def __enter__(self) -> StepClock:
        # step ends and data waits only: no line sampler thread taking the GIL from the steps
        config = DiagnoseConfig(steps=0, warmup=0, stop=False, count_ops=False, line_profile=False)
        self._session = Session(config)
        self._session.tracker.on_step_end.append(self._on_step)
        self._session.install()
        return self

    def __exit__(self, *exc) -> None:
        if self._session is not None:
            self._session.uninstall()
            self._session = None

    def _on_step(self, record) -> None:
        self.ends.append(record.end)
        self.waits.append(record.phases.get("data", 0.0))

    def measured_seconds(self, warmup: int) -> float | None:
        if len(self.ends) <= warmup or warmup < 1:
            return None
        return self.ends[-1] - self.ends[warmup - 1]

    def steps_per_s(self, warmup: int) -> float | None:
        seconds = self.measured_seconds(warmup)
        return (len(self.ends) - warmup) / seconds if seconds else None

    def data_wait_share(self, warmup: int) -> float | None:
        seconds = self.measured_seconds(warmup)
        return min(1.0, sum(self.waits[warmup:]) / seconds) if seconds else None
