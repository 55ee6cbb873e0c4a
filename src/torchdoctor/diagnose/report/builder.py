"""Build the Report from an observation and the ranked findings. The numbers come from the one
step analysis (diagnose/step_analysis.py, shared with the rules); the builder chooses the verdict
as data (report/verdict.py), and report/prose.py words it for every renderer."""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import PHASES, RunObservation
from torchdoctor.diagnose.report.lines import LineRow, finding_lines, verdict_lines
from torchdoctor.diagnose.report.memory_view import build_memory_view
from torchdoctor.diagnose.report.model import LEAST_SAVING, Report
from torchdoctor.diagnose.report.verdict import (
    Bound,
    NoSteps,
    NoStepsWhy,
    TopFix,
    TopLine,
    Unexplained,
    Verdict,
)
from torchdoctor.diagnose.source_lines import lines_around
from torchdoctor.diagnose.step_analysis import (
    COMPUTE_PHASES,
    analyze,
    evaluation_is_acting,
    evaluation_share,
    training_share,
    typical_batch,
)

# Above this share of the measured time in evaluation spans (cut out of the steps), the verdict
# says so first: acting forwards of an RL loop, inference inside the loop, heavy validation.
EVALUATION_HEAVY = 0.5

# A top finding saving less than this leaves the dominant phase unexplained: the verdict names
# the phase's top line of the program's own code (from the line profile)
EXPLAINED_SAVING = 0.05
# The findings' savings must reach this share of the dominant part to count as explaining it.
EXPLAINED = 0.5
# Which findings act on which part of the step (code prefixes): a verdict whose dominant part no
# finding acts on says so, and how to look, instead of pointing nowhere.
ACTS_ON = {
    "data": ("D1",),
    "h2d": ("D104", "D402"),
    "compute": ("D2", "D4", "D5", "D6"),
    "other": ("D2", "D3", "D4", "D7"),
}


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
    why: NoStepsWhy = "no_training_step" if run.backwards_seen else "no_training_loop"
    if run.status == "stopped" and run.forwards_seen and not run.backwards_seen:
        why = "budget_in_evaluation"  # only whole-cycle mode's budget stops before any step
    return NoSteps(
        why,
        0,
        run.status,
        run.error,
        run.backwards_seen,
        run.forwards_seen,
        run.child_processes,
        tuple(run.child_process_targets),
    )


def _unexplained(bound: Bound, findings: list[Finding], train_share: float) -> Unexplained | None:
    """None when findings acting on the dominant part account for most of it. The findings'
    savings are shares of the run (steps plus evaluation), the bound's a share of the step: the
    savings are put on the step's scale (divided by the steps' share of the run) to compare."""
    prefixes = ACTS_ON.get(bound.kind, ())
    of_run = sum(
        f.saving
        for f in findings
        # a line's finding whose line ran in the data phase (a wait on the program's own
        # producer queue) acts on the data time
        if f.id.startswith(prefixes) or (bound.kind == "data" and f.details.get("phase") == "data")
    )
    explained = min(1.0, of_run / train_share) if train_share > 0 else of_run
    if explained >= EXPLAINED * bound.share:
        return None
    return Unexplained(bound.kind, bound.share, explained)


def _verdict(
    run,
    bound: Bound | None,
    evaluation: float,
    findings: list[Finding],
    top_lines: list[LineRow] | None = None,
) -> Verdict:
    if bound is None:
        return Verdict(no_steps=_no_steps(run))
    top = findings[0] if findings and findings[0].saving >= LEAST_SAVING else None
    unexplained = _unexplained(bound, findings, training_share(run))
    line = None
    # the top line, where no finding saves much or the findings leave most of the dominant part
    # unexplained (cleanrl's DQN: D202 saves 10%, the environment's step is 37% of "other")
    if top_lines and (unexplained is not None or not (top and top.saving >= EXPLAINED_SAVING)):
        row = top_lines[0]
        line = TopLine(row.location, row.code, row.share)
    return Verdict(
        bound=bound,
        evaluation_share=evaluation if evaluation > EVALUATION_HEAVY else None,
        evaluation_is_acting=evaluation > EVALUATION_HEAVY and evaluation_is_acting(run),
        top_fix=TopFix(top.id, top.title, top.saving, top.saving_basis) if top else None,
        unexplained=unexplained,
        top_line=line,
        ended=run.status if run.status in ("crashed", "interrupted") else None,
        measured_steps=len(run.steps),
    )


def finding_locations(finding: Finding) -> list[str]:
    """The user's "file:line" places a finding names in its details."""
    details = finding.details
    found = [details["location"]] if isinstance(details.get("location"), str) else []
    found += [loc for loc in details.get("locations") or [] if isinstance(loc, str)]
    found += [site["location"] for site in details.get("sites") or [] if isinstance(site, dict)]
    return list(dict.fromkeys(found))


def _source_lines(findings: list[Finding]) -> dict[str, list[tuple[int, str]]]:
    """The user's lines around each finding's first location, read once for the report."""
    shown: dict[str, list[tuple[int, str]]] = {}
    for finding in findings:
        for location in finding_locations(finding)[:1]:
            if location not in shown:
                lines = lines_around(location)
                if lines:
                    shown[location] = lines
    return shown


def build_report(run: RunObservation, findings: list[Finding]) -> Report:
    analysis = analyze(run)
    breakdown = analysis.breakdown
    if not breakdown:  # no measured step (warm-up steps include start-up: nothing to attribute)
        reason = _verdict(run, None, 0.0, [])
        return Report(
            run=run,
            breakdown={},
            findings=list(findings),
            reason=reason,
            memory=build_memory_view(run),
        )
    bound = _bound(breakdown, model_seen=bool(run.models))
    top_lines = verdict_lines(run, bound.dominant_phase)
    step_time = analysis.median_step_s
    batch = typical_batch(analysis.measured)
    samples = batch / step_time if batch and step_time else None
    return Report(
        run=run,
        breakdown=breakdown,
        findings=list(findings),
        reason=_verdict(run, bound, evaluation_share(run, measured_only=True), findings, top_lines),
        step_time_s=step_time,
        samples_per_s=samples,
        dominant_phase=_bound(breakdown).dominant_phase,
        # the median step split by the shares: the phases add up to the step time shown beside
        phase_seconds={p: breakdown.get(p, 0.0) * step_time for p in PHASES},
        spread=analysis.spread,
        memory=build_memory_view(run),
        source_lines=_source_lines(findings),
        finding_lines=[finding_lines(run, finding) for finding in findings],
        verdict_lines=top_lines,
    )
