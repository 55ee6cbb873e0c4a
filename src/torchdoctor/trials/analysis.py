"""From worker results to verdicts: per-configuration summaries and baseline comparisons."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass

from torchdoctor.trials import plausibility, semantics, stats
from torchdoctor.trials.fixes import get_fix
from torchdoctor.trials.report import ConfigResult, Spread, VariantResult
from torchdoctor.trials.runner import RunOutcome

# A speedup counts as real when the median clears this (and the baseline's own run-to-run
# spread) and every one of at least MIN_ROUNDS paired rounds agrees on the direction.
MIN_GAIN = 1.05
MIN_ROUNDS = 3
# "all" faster than the product of its parts' speedups by more than this factor is suspicious:
# a measurement artefact (e.g. warm-up prefetch) is likelier than that much synergy. Each part
# counts as at least 1x: a fix that costs alone may stop costing in combination (autocast on a
# float64 model is slow, on the float32 one the float32 fix makes it is not).
SYNERGY_LIMIT = 1.5
SUSPICIOUS = "suspicious"
# Paired rounds whose speedups differ by more than this (largest / smallest - 1) are unsettled:
# another round is worth running (trials.runner). 15% keeps a 30% gain within 25-35%.
SETTLED_SPREAD = 0.15


def _status(fixes: list[str], outcomes: list[RunOutcome]) -> tuple[str, str | None, str]:
    for outcome in outcomes:
        result = outcome.result
        if result is None:
            return (
                "crashed",
                f"trial worker exited with code {outcome.returncode}",
                outcome.stderr_tail,
            )
        if result["failed_fixes"]:
            name, error = next(iter(result["failed_fixes"].items()))
            return "failed", f"{name} could not be applied: {error}", ""
        if result["status"] == "crashed":
            return "crashed", result["error"], outcome.stderr_tail
    used = set.union(*(set(o.result["used_fixes"]) for o in outcomes)) if outcomes else set()
    if fixes and not used:
        return "no effect", "nothing in this run matched what the fix changes", ""
    return "ok", None, ""


def summarize(name: str, fixes: list[str], outcomes: list[RunOutcome], warmup: int) -> ConfigResult:
    status, error, stderr_tail = _status(fixes, outcomes)
    results = [o.result for o in outcomes if o.result is not None]
    measured = [r for r in results if stats.measured_steps(r, warmup)]
    memory = [r["peak_memory_bytes"] for r in results]
    return ConfigResult(
        name=name,
        fixes=fixes,
        runs=len(measured),
        step_s=stats.spread([stats.mean_step_s(r, warmup) for r in measured]),
        samples_per_s=stats.spread([stats.samples_per_s(r, warmup) for r in measured]),
        cpu_step_s=stats.spread([stats.mean_step_s(r, warmup, "cpu_s") for r in measured]),
        peak_memory_bytes=int(statistics.median(memory)) if memory else None,
        memory_source=results[0]["memory_source"] if results else "unknown",
        losses=semantics.losses(results[0]) if results else [],
        elapsed_s=statistics.median(o.seconds for o in outcomes) if outcomes else 0.0,
        status=status,
        error=error,
        stderr_tail=stderr_tail,
        prefetch_steps=max((r.get("prefetch_steps", 0) for r in results), default=0),
        files_not_restored=sorted({f for r in results for f in r.get("files_not_restored", [])}),
    )


def clock_for(fixes: list[str], device_type: str) -> str:
    """The clock a configuration's gain is read on: the training process's CPU time where the
    fixes change that process's own work on a CPU (steadier on a shared machine), else wall."""
    return "cpu_s" if plausibility.needs_cpu_agreement(fixes, device_type) else "wall_s"


def per_sample(fixes: list[str]) -> bool:
    """Does a fix change what a step is (a larger batch)? Then speeds are compared per sample and
    losses at equal samples seen (fixes' `PER_SAMPLE`)."""
    return any(getattr(get_fix(name), "PER_SAMPLE", False) for name in fixes)


def unsettled(
    configs: dict[str, list[str]],
    outcomes: dict[str, list[RunOutcome]],
    warmup: int,
    device: str,
    wants_more: Callable[[str, Spread], bool] | None = None,
) -> list[str]:
    """The configurations that another round could still decide, on the clock their verdict
    reads (`decisive_speedups`):
    fewer than MIN_ROUNDS rounds; where the gain lies (stats.gain_interval) still wider than
    SETTLED_SPREAD; a verdict's interval (DECIDE_COVERAGE) across 1x that reaches beyond
    MIN_GAIN (a gain or loss that large is not yet ruled out, nor shown); or `wants_more(name,
    speedups)` (the paired speedups on that clock) asks: a caller that holds the gain to a
    claim (the calibration bench: a stated saving within 1.5x) asks while the rounds cannot
    decide it. A configuration that crashed, could not apply its fixes or measured nothing is
    settled: more rounds would not change that."""
    base = [o.result for o in outcomes["baseline"] if o.result is not None]
    found = []
    for name, fixes in configs.items():
        if name == "baseline" or _status(fixes, outcomes[name])[0] != "ok":
            continue
        runs = [o.result for o in outcomes[name] if o.result is not None]
        ratios, _ = decisive_speedups(base, runs, warmup, fixes, device)
        if ratios.low is None or ratios.high is None:
            continue
        if ratios.count < MIN_ROUNDS or _open(ratios):
            found.append(name)
        elif wants_more is not None and wants_more(name, ratios):
            found.append(name)
    return found


def _open(ratios: Spread) -> bool:
    """Can another paired round still change what these rounds say (see `unsettled`)?"""
    low, high = stats.gain_interval(ratios.values) or (min(ratios.values), max(ratios.values))
    if high > low * (1.0 + SETTLED_SPREAD):
        return True
    decided = stats.gain_interval(ratios.values, stats.DECIDE_COVERAGE)
    if decided is None:
        return False  # too few rounds for that interval, and the gain is already narrow
    low, high = decided
    return low <= 1.0 <= high and (high > MIN_GAIN or low < 1.0 / MIN_GAIN)


def tolerance_for(fixes: list[str]) -> tuple[float, str]:
    """The loosest tolerance among the fixes (a combination is as approximate as its loosest)."""
    loosest = max((get_fix(name) for name in fixes), key=lambda fix: fix.TOLERANCE)
    return loosest.TOLERANCE, f"{loosest.NAME}: {loosest.TOLERANCE_REASON}"


def compare(
    baseline: ConfigResult,
    baseline_outcomes: list[RunOutcome],
    variant: ConfigResult,
    variant_outcomes: list[RunOutcome],
    warmup: int,
    noise: Noise | None = None,
) -> VariantResult:
    if variant.status in ("crashed", "failed") or not variant.runs:
        return VariantResult(variant, None, None, None, None, variant.status)
    base_runs = [o.result for o in baseline_outcomes if o.result is not None]
    var_runs = [o.result for o in variant_outcomes if o.result is not None]
    by_sample = per_sample(variant.fixes)
    speedup = stats.paired_speedups(base_runs, var_runs, warmup, per_sample=by_sample)
    throughput = _ratio(variant.samples_per_s.median, baseline.samples_per_s.median)
    memory = _ratio(variant.peak_memory_bytes, baseline.peak_memory_bytes)
    if by_sample:
        judged = semantics.judge_per_sample(base_runs, var_runs)
    else:
        tolerance, reason = tolerance_for(variant.fixes)
        moves_randomness = any(
            getattr(get_fix(n), "MOVES_DATA_RANDOMNESS", False) for n in variant.fixes
        )
        redraws_dropout = any(getattr(get_fix(n), "REDRAWS_DROPOUT", False) for n in variant.fixes)
        judged = semantics.judge(
            base_runs, var_runs, tolerance, reason, moves_randomness, redraws_dropout
        )
    cpu_speedup = stats.paired_speedups(base_runs, var_runs, warmup, "cpu_s", by_sample)
    noise = noise or Noise()
    clock = clock_for(variant.fixes, noise.device_type)
    on_cpu = clock == "cpu_s"
    decisive, decided_on = decisive_speedups(
        base_runs, var_runs, warmup, variant.fixes, noise.device_type
    )
    # the baseline's run-to-run spread is the whole step's; a phase clock's rounds take the
    # fix's phase seconds off the same step, and that spread is not theirs
    baseline_spread = None if decided_on == "phase" else noise.cpu if on_cpu else noise.wall
    label = verdict(variant.status, decisive, judged.verdict, baseline_spread)
    if on_cpu and OPPOSITE.get(label) == verdict(variant.status, speedup, judged.verdict):
        label = "no clear gain"  # the process worked less, yet the user waited clearly longer
    interval = stats.gain_interval(decisive.values, stats.DECIDE_COVERAGE) if decisive else None
    phases = phase_clock_for(variant.fixes)
    phase_speedup = (
        stats.phase_speedups(base_runs, var_runs, warmup, phases, clock) if phases else None
    )
    bound = plausibility.amdahl_bound(
        variant.fixes, _loosest_shares(stats.phase_shares(base_runs, warmup), noise.breakdown)
    )
    spread = baseline_spread or 0.0
    median = decisive.median or 0.0
    if label == "faster" and bound and median > bound * (1.0 + spread):
        label = SUSPICIOUS
    return VariantResult(
        variant,
        speedup,
        throughput,
        None if memory is None else memory - 1.0,
        judged,
        label,
        cpu_speedup,
        by_sample,
        decided_on,
        list(interval) if interval else None,
        phase_speedup if phase_speedup and phase_speedup.values else None,
        phases,
        decisive,
    )


def _loosest_shares(trial: dict[str, float], diagnosis: dict | None) -> dict | None:
    """Per phase, the larger of its share in the baseline's own steps (every one counted) and
    in the diagnosis's breakdown (its typical steps): the loosest bound either allows. The
    typical steps leave out the epoch start-ups a persistent_workers or workers fix removes
    (d103: 96% gained, "suspicious" against a bound from steps that never waited for respawned
    workers); a trial's wall-clock phases on a loaded machine hold the preemption wherever it
    fell (multi_anomaly_adamw at load 25: backward 10% of the step, "other" 22%), and a plausibility
    bound must not call a real gain suspicious on either one's account."""
    if not trial:
        return diagnosis
    if not diagnosis:
        return trial
    return {p: max(trial.get(p, 0.0), diagnosis.get(p, 0.0)) for p in {*trial, *diagnosis}}


def decisive_speedups(
    base_runs: list[dict], var_runs: list[dict], warmup: int, fixes: list[str], device: str
) -> tuple[Spread, str]:
    """The paired speedups a verdict reads, and their clock: "phase" where every fix acts on
    phases of its own (`phase_clock_for`: a fused optimizer step) and at least MIN_ROUNDS
    rounds recorded them, else "cpu" or "wall" (`clock_for`). The phase clock takes only what
    the fix changed in its phase off the step: a 0.3 ms optimizer saving in a 2 ms step is no
    longer lost in the swings of the rest of the step (round 14: -25%..20% on the whole step's
    CPU time, 0.3-4% on the phase, over the same three rounds)."""
    clock = clock_for(fixes, device)
    phases = phase_clock_for(fixes)
    if phases:
        on_phase = stats.phase_speedups(base_runs, var_runs, warmup, phases, clock)
        if on_phase.count >= MIN_ROUNDS:
            return on_phase, "phase"
    whole = stats.paired_speedups(base_runs, var_runs, warmup, clock, per_sample(fixes))
    return whole, "cpu" if clock == "cpu_s" else "wall"


def phase_clock_for(fixes: list[str]) -> tuple[str, ...]:
    """The step phases the fixes act on, timed alone (each fix's PHASE_CLOCK); () where one
    fix names none (its work is spread over the step, or outside it), or a batch-size fix
    changes what a step is."""
    phases: list[str] = []
    for name in fixes:
        own = getattr(get_fix(name), "PHASE_CLOCK", ())
        if not own or per_sample([name]):
            return ()
        phases += [p for p in own if p not in phases]
    return tuple(phases)


OPPOSITE = {"faster": "slower", "slower": "faster"}


@dataclass
class Noise:
    """What a variant's numbers are judged against: the baseline's run-to-run spread (wall and
    CPU time), the device, and the diagnosis's phase shares (for Amdahl's bound)."""

    wall: float | None = None
    cpu: float | None = None
    device_type: str = "cpu"
    breakdown: dict | None = None


def verdict(
    status: str, speedup, semantics_verdict: str, baseline_spread: float | None = None
) -> str:
    """ "faster": >= MIN_ROUNDS paired rounds, all above 1, and a median above both MIN_GAIN and
    1 + the baseline's run-to-run spread; or, from 5 rounds on, where the centre of the paired
    speedups lies with DECIDE_COVERAGE chance (stats.gain_interval) all above 1: paired
    rounds cancel the load both runs of a round saw, which a spread between runs of different
    rounds does not, so a 5% gain measured in rounds that agree is a gain even where the load
    moves whole runs by 20%. "slower" mirrors it; otherwise "no clear gain"."""
    if semantics_verdict == "changed":
        return "changes results"
    if status == "no effect":
        return "no effect"
    if speedup is None or speedup.median is None:
        return "not measured"
    if speedup.count < MIN_ROUNDS:
        return "no clear gain"  # one or two runs cannot tell a gain from noise
    needed = max(MIN_GAIN, 1.0 + (baseline_spread or 0.0))
    if speedup.median >= needed and speedup.low > 1.0:
        return "faster"
    if speedup.median <= 1 / needed and speedup.high < 1.0:
        return "slower"
    interval = stats.gain_interval(speedup.values, stats.DECIDE_COVERAGE)
    if interval is not None and interval[0] > 1.0:
        return "faster"
    if interval is not None and interval[1] < 1.0:
        return "slower"
    return "no clear gain"


def check_combination(variants: list[VariantResult]) -> None:
    """Judge "all" against its parts (in place): it keeps a part's "changed" semantics, and a
    speedup far beyond the product of the parts' speedups is flagged, not recommended."""
    parts = {v.config.name: v for v in variants if v.config.name != "all"}
    combined = next((v for v in variants if v.config.name == "all"), None)
    if combined is None or combined.semantics is None:
        return
    changed = [v for v in parts.values() if v.semantics and v.semantics.verdict == "changed"]
    if changed and combined.semantics.verdict in semantics.KEPT_VERDICTS:
        combined.semantics.verdict = "changed"
        combined.verdict = "changes results"
    medians = [v.speedup.median if v.speedup else None for v in parts.values()]
    if combined.verdict != "faster" or not medians or None in medians:
        return
    product = 1.0
    for median in medians:
        product *= max(median, 1.0)
    if combined.speedup.median > SYNERGY_LIMIT * product:
        combined.verdict = SUSPICIOUS


def _ratio(a, b) -> float | None:
    return a / b if a is not None and b else None
