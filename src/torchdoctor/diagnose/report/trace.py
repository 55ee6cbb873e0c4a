"""`--trace FILE`: Chrome / Perfetto trace JSON: each measured step, and each phase where it
really ran within the step (`StepObservation.phase_spans`: a forward, the data wait between two
micro-batches, the backward ...; evaluation cut out of the steps shows as a gap). A step without
recorded spans (an observation from an older version) gets its phases laid end to end from the
step's start, in the fixed phase order. Open it in ui.perfetto.dev or chrome://tracing.
"""

from __future__ import annotations

import json
from pathlib import Path

from torchdoctor.diagnose.observations import PHASES
from torchdoctor.diagnose.report.model import Report

PID = 1
TID_STEPS, TID_PHASES = 1, 2


def trace_events(report: Report) -> list[dict]:
    events: list[dict] = [
        {"name": "process_name", "ph": "M", "pid": PID, "args": {"name": report.run.target}},
    ]
    for tid, name in ((TID_STEPS, "steps"), (TID_PHASES, "phases")):
        events.append(
            {"name": "thread_name", "ph": "M", "pid": PID, "tid": tid, "args": {"name": name}}
        )
    for step in report.run.steps:
        start_us = 1e6 * (step.start_s or 0.0)
        events.append({
            "name": f"step {step.index}", "cat": "step", "ph": "X", "pid": PID, "tid": TID_STEPS,
            "ts": start_us, "dur": 1e6 * step.wall_s,
            "args": {"batch_size": step.batch_size, "loss": step.loss, "syncs": step.syncs},
        })  # fmt: skip
        for phase, start_s, duration_s in _placed(step):
            events.append({
                "name": phase, "cat": "phase", "ph": "X", "pid": PID, "tid": TID_PHASES,
                "ts": 1e6 * start_s, "dur": 1e6 * duration_s, "args": {"step": step.index},
            })  # fmt: skip
    return events


def _placed(step) -> list[tuple[str, float, float]]:
    """(phase, start, duration) in seconds: the recorded spans, or the phases end to end."""
    if step.phase_spans:
        return [(phase, t0, t1 - t0) for phase, t0, t1 in step.phase_spans]
    placed, offset = [], step.start_s or 0.0
    for phase in PHASES:
        duration = step.phases.get(phase, 0.0)
        placed.append((phase, offset, duration))
        offset += duration
    return placed


def write_trace(report: Report, path: str | Path) -> None:
    document = {"traceEvents": trace_events(report), "displayTimeUnit": "ms"}
    Path(path).write_text(json.dumps(document), encoding="utf-8")
