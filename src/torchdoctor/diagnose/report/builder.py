"""Build the Report from an observation and the ranked findings. All numbers a renderer shows are
computed here (renderers only lay them out)."""

from __future__ import annotations

import statistics

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import PHASES, RunObservation
from torchdoctor.diagnose.report.model import Report

COMPUTE = ("forward", "backward", "optimizer")


def _breakdown(run: RunObservation) -> dict[str, float]:
    total = sum(step.wall_s for step in run.steps)
    if total <= 0:
        return {}
    return {p: sum(step.phases.get(p, 0.0) for step in run.steps) / total for p in PHASES}


def _pct(share: float) -> str:
    return f"{100 * share:.0f}%"


def _bound(breakdown: dict[str, float]) -> tuple[str, str]:
    """(dominant phase, words) for the largest of data, h2d, compute and other."""
    compute = sum(breakdown.get(p, 0.0) for p in COMPUTE)
    candidates = {
        "data": breakdown.get("data", 0.0),
        "h2d": breakdown.get("h2d", 0.0),
        "other": breakdown.get("other", 0.0),
        "compute": compute,
    }
    kind = max(candidates, key=candidates.get)
    share = candidates[kind]
    if kind == "data":
        return "data", f"data-loading bound: {_pct(share)} of step time waiting for batches"
    if kind == "h2d":
        return "h2d", f"transfer bound: {_pct(share)} of step time copying batches to the device"
    if kind == "other":
        return "other", (
            f"host-overhead bound: {_pct(share)} of step time outside data, model and optimizer "
            "(logging, metrics, checkpoints)"
        )
    parts = ", ".join(f"{p} {_pct(breakdown.get(p, 0.0))}" for p in COMPUTE)
    dominant = max(COMPUTE, key=lambda p: breakdown.get(p, 0.0))
    return dominant, f"compute bound: {_pct(share)} of step time in the model ({parts})"


def _no_steps_verdict(run: RunObservation) -> str:
    if run.status == "crashed":
        return f"no training step measured: the script crashed first ({run.error})"
    if run.status == "interrupted":
        return "no training step measured: interrupted before the first step ended"
    first = run.notes[0] if run.notes else "no backward() ran"
    return first if first.startswith("no training") else "no training loop seen: " + first


def _verdict(run: RunObservation, breakdown: dict[str, float], findings: list[Finding]) -> str:
    if not breakdown:
        return _no_steps_verdict(run)
    _, words = _bound(breakdown)
    if findings and findings[0].saving > 0:
        top = findings[0]
        words += f"; top fix: {top.title} (~{_pct(top.saving)} of step time)"
    if run.status in ("crashed", "interrupted"):
        words = f"[{run.status} after {len(run.steps)} measured steps] " + words
    return words


def build_report(run: RunObservation, findings: list[Finding]) -> Report:
    breakdown = _breakdown(run)
    step_time = statistics.median(s.wall_s for s in run.steps) if run.steps else None
    batches = [s.batch_size for s in run.steps if s.batch_size]
    samples = statistics.median(batches) / step_time if batches and step_time else None
    phase_seconds = {}
    if run.steps:
        phase_seconds = {
            p: sum(s.phases.get(p, 0.0) for s in run.steps) / len(run.steps) for p in PHASES
        }
    return Report(
        run=run,
        breakdown=breakdown,
        findings=list(findings),
        verdict=_verdict(run, breakdown, findings),
        step_time_s=step_time,
        samples_per_s=samples,
        dominant_phase=_bound(breakdown)[0] if breakdown else None,
        phase_seconds=phase_seconds,
    )
