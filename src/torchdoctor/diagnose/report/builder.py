"""Build the Report from an observation and the ranked findings. All numbers a renderer shows are
computed here (renderers only lay them out)."""

from __future__ import annotations

import statistics

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import PHASES, RunObservation, StepObservation
from torchdoctor.diagnose.report.model import Report

COMPUTE = ("forward", "backward", "optimizer")


# A step slower than this many median steps is an outlier (a preemption on a loaded machine, a
# one-off checkpoint or allocation); outliers are left out of the breakdown while they are rare
# (at most this share of the steps): otherwise they are how the loop behaves, and count.
OUTLIER_FACTOR = 4.0
RARE_SHARE = 0.25
# Above this share of the measured time in evaluation spans (cut out of the steps), the verdict
# says so first: acting forwards of an RL loop, inference inside the loop, heavy validation.
EVALUATION_HEAVY = 0.5


def _typical_steps(steps: list[StepObservation]) -> tuple[list[StepObservation], list[str]]:
    """(the steps the breakdown is drawn from, notes on step-time spread)."""
    median = statistics.median(s.wall_s for s in steps)
    outliers = [s for s in steps if s.wall_s > OUTLIER_FACTOR * median]
    if not outliers or median <= 0:
        return steps, []
    worst = max(s.wall_s for s in outliers)
    spread = (
        f"{len(outliers)} of {len(steps)} steps took over {OUTLIER_FACTOR:.0f}x the median step "
        f"(slowest {1000 * worst:.1f} ms, {worst / median:.0f}x the median {1000 * median:.1f} ms)"
    )
    compiled = [s.index for s in outliers if s.compiles]
    if compiled:  # a known cause: say it instead of guessing
        spread += (
            f"; torch.compile compiled new code during step(s) {', '.join(map(str, compiled))} "
            "(a new input shape such as a smaller last batch: drop_last=True or "
            "torch.compile(dynamic=True); or a train/eval switch)"
        )
    if len(outliers) <= RARE_SHARE * len(steps):
        kept = [s for s in steps if s.wall_s <= OUTLIER_FACTOR * median]
        why = (
            ""
            if len(compiled) == len(outliers)
            else (
                " (a preemption, or a periodic cost such as a checkpoint? measure more --steps to tell)"
            )
        )
        return kept, [f"{spread}: left out of the breakdown{why}"]
    return steps, [f"step times vary widely: {spread}; the breakdown averages all steps"]


def _breakdown(steps: list[StepObservation]) -> dict[str, float]:
    total = sum(step.wall_s for step in steps)
    if total <= 0:
        return {}
    return {p: sum(step.phases.get(p, 0.0) for step in steps) / total for p in PHASES}


def _pct(share: float) -> str:
    return f"{100 * share:.0f}%"


def _bound(breakdown: dict[str, float], model_seen: bool = True) -> tuple[str, str]:
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
    if kind == "other" and not model_seen:
        return "other", (
            f"host-overhead bound: {_pct(share)} of step time outside data loading, backward and "
            "optimizer; no nn.Module call was seen (model.forward() called directly, or raw "
            "tensor math), so the model's own forward time is counted here too"
        )
    if kind == "other":
        return "other", (
            f"host-overhead bound: {_pct(share)} of step time outside data, model and optimizer "
            "(batch preparation, logging, metrics, checkpoints)"
        )
    parts = ", ".join(f"{p} {_pct(breakdown.get(p, 0.0))}" for p in COMPUTE)
    dominant = max(COMPUTE, key=lambda p: breakdown.get(p, 0.0))
    return dominant, f"compute bound: {_pct(share)} of step time in the model ({parts})"


def _no_steps_verdict(run: RunObservation) -> str:
    if run.warmup_only:
        why = "use a longer run or a smaller --warmup"
        if run.status == "crashed":
            why = f"the script crashed: {run.error}"
        elif run.status == "interrupted":
            why = "interrupted"
        return f"too few steps to measure: {len(run.steps)} ran, all warm-up ({why})"
    if run.status == "crashed":
        return f"no training step measured: the script crashed first ({run.error})"
    if run.status == "interrupted":
        return "no training step measured: interrupted before the first step ended"
    first = run.notes[0] if run.notes else "no backward() ran"
    return first if first.startswith("no training") else "no training loop seen: " + first


def _evaluation_share(steps: list[StepObservation]) -> float:
    evaluation = sum(s.evaluation_s for s in steps)
    total = evaluation + sum(s.wall_s for s in steps)
    return evaluation / total if total > 0 else 0.0


def _verdict(run: RunObservation, breakdown: dict[str, float], findings: list[Finding]) -> str:
    if not breakdown:
        return _no_steps_verdict(run)
    _, words = _bound(breakdown, model_seen=bool(run.models))
    evaluation = _evaluation_share(run.steps)
    if evaluation > EVALUATION_HEAVY:
        words = (
            f"evaluation-heavy: {_pct(evaluation)} of the measured time ran forwards whose outputs "
            "never got a gradient, or waited for their loaders (validation, or acting/inference "
            f"inside the loop), and is left out of the steps; within the steps, {words}"
        )
    if findings and findings[0].saving > 0:
        top = findings[0]
        basis = "measured" if top.saving_basis == "measured" else "estimate"
        words += f"; top fix: {top.title} (~{_pct(top.saving)} of run time, {basis})"
    if run.status in ("crashed", "interrupted"):
        words = f"[{run.status} after {len(run.steps)} measured steps] " + words
    return words


def build_report(run: RunObservation, findings: list[Finding]) -> Report:
    if not run.steps or run.warmup_only:  # warm-up steps include start-up: nothing to attribute
        return Report(run=run, breakdown={}, findings=list(findings), verdict=_verdict(run, {}, []))
    typical, step_notes = _typical_steps(run.steps)
    breakdown = _breakdown(typical)
    step_time = statistics.median(s.wall_s for s in run.steps)
    batches = [s.batch_size for s in run.steps if s.batch_size]
    samples = statistics.median(batches) / step_time if batches and step_time else None
    # the median step split by the shares: the phases add up to the step time shown beside them
    phase_seconds = {p: breakdown.get(p, 0.0) * step_time for p in PHASES} if breakdown else {}
    return Report(
        run=run,
        breakdown=breakdown,
        findings=list(findings),
        verdict=_verdict(run, breakdown, findings),
        step_time_s=step_time,
        samples_per_s=samples,
        dominant_phase=_bound(breakdown)[0] if breakdown else None,
        phase_seconds=phase_seconds,
        step_notes=step_notes,
    )
