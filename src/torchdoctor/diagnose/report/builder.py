"""Build the Report from an observation and the ranked findings. The numbers come from the one
step analysis (diagnose/step_analysis.py, shared with the rules); the builder chooses the verdict
as data (report/verdict.py), and report/prose.py words it for every renderer."""

from __future__ import annotations

import statistics

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import PHASES, RunObservation
from torchdoctor.diagnose.report.model import Report
from torchdoctor.diagnose.report.verdict import Bound, NoSteps, TopFix, Verdict
from torchdoctor.diagnose.step_analysis import COMPUTE_PHASES, analyze

# Above this share of the measured time in evaluation spans (cut out of the steps), the verdict
# says so first: acting forwards of an RL loop, inference inside the loop, heavy validation.
EVALUATION_HEAVY = 0.5


def _bound(breakdown: dict[str, float], model_seen: bool = True) -> Bound:
    """The largest of data, h2d, compute and other."""
    compute_shares = {p: breakdown.get(p, 0.0) for p in COMPUTE_PHASES}
    candidates = {
        "data": breakdown.get("data", 0.0),
        "h2d": breakdown.get("h2d", 0.0),
        "other": breakdown.get("other", 0.0),
        "compute": sum(compute_shares.values()),
    }
    kind = max(candidates, key=lambda name: candidates[name])
    dominant = kind
    if kind == "compute":
        dominant = max(COMPUTE_PHASES, key=lambda p: compute_shares[p])
    return Bound(kind, candidates[kind], dominant, compute_shares, model_seen)  # type: ignore[arg-type]


def _no_steps(run: RunObservation) -> NoSteps:
    if run.warmup_only:
        return NoSteps("warmup_only", len(run.steps), run.status, run.error)
    if run.status in ("crashed", "interrupted"):
        return NoSteps(run.status, 0, run.status, run.error)  # type: ignore[arg-type]
    why = "no_training_step" if run.backwards_seen else "no_training_loop"
    return NoSteps(why, 0, run.status, run.error, run.backwards_seen, run.forwards_seen)


def _verdict(run, bound: Bound | None, evaluation: float, findings: list[Finding]) -> Verdict:
    if bound is None:
        return Verdict(no_steps=_no_steps(run))
    top = findings[0] if findings and findings[0].saving > 0 else None
    return Verdict(
        bound=bound,
        evaluation_share=evaluation if evaluation > EVALUATION_HEAVY else None,
        top_fix=TopFix(top.id, top.title, top.saving) if top else None,
        ended=run.status if run.status in ("crashed", "interrupted") else None,
        measured_steps=len(run.steps),
    )


def build_report(run: RunObservation, findings: list[Finding]) -> Report:
    analysis = analyze(run)
    breakdown = analysis.breakdown
    if not breakdown:  # no measured step (warm-up steps include start-up: nothing to attribute)
        reason = _verdict(run, None, 0.0, [])
        return Report(run=run, breakdown={}, findings=list(findings), reason=reason)
    bound = _bound(breakdown, model_seen=bool(run.models))
    step_time = analysis.median_step_s
    batches = [s.batch_size for s in analysis.measured if s.batch_size]
    samples = statistics.median(batches) / step_time if batches and step_time else None
    return Report(
        run=run,
        breakdown=breakdown,
        findings=list(findings),
        reason=_verdict(run, bound, analysis.evaluation_share, findings),
        step_time_s=step_time,
        samples_per_s=samples,
        dominant_phase=_bound(breakdown).dominant_phase,
        # the median step split by the shares: the phases add up to the step time shown beside
        phase_seconds={p: breakdown.get(p, 0.0) * step_time for p in PHASES},
        spread=analysis.spread,
    )
