"""`--trace FILE`: Chrome / Perfetto trace JSON with one event per phase per measured step.

Phases of a step are laid end to end from the step's start in the fixed phase order (the tracker
keeps totals per phase, not every interval), so the trace shows how each step splits up, and
steps appear where they happened in time. Open it in ui.perfetto.dev or chrome://tracing.
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
        offset = start_us
        for phase in PHASES:
            duration = 1e6 * step.phases.get(phase, 0.0)
            events.append({
                "name": phase, "cat": "phase", "ph": "X", "pid": PID, "tid": TID_PHASES,
                "ts": offset, "dur": duration, "args": {"step": step.index},
            })  # fmt: skip
            offset += duration
    return events


def write_trace(report: Report, path: str | Path) -> None:
    document = {"traceEvents": trace_events(report), "displayTimeUnit": "ms"}
    Path(path).write_text(json.dumps(document), encoding="utf-8")
