"""Numbers from repeated worker runs: medians, spreads, paired speedups, loss deviations."""

from __future__ import annotations

import math
import statistics

from torchdoctor.trials.report import Spread


def spread(values: list[float]) -> Spread:
    values = [v for v in values if v is not None]
    if not values:
        return Spread(None, None, None)
    return Spread(statistics.median(values), min(values), max(values), len(values), values)


# the least chance that the median of the paired rounds' distribution lies inside median_range
MEDIAN_COVERAGE = 0.75


def median_range(values: list[float], coverage: float = MEDIAN_COVERAGE) -> tuple[float, float]:
    """Where the median of what the rounds measure lies, from the rounds alone: the narrowest
    pair of order statistics (k-th smallest, k-th largest) that holds it with at least
    `coverage` chance (a sign test: each round falls on either side of the median with even
    odds). It narrows as rounds are added: 3-4 rounds give their whole range, 6 drop one at
    each end, 12 three; a range of all the rounds (or all but the extremes) never narrows."""
    ordered = sorted(values)
    n = len(ordered)
    if n == 0:
        raise ValueError("no values")
    k = 1
    while k < (n + 1) // 2 and _inside_chance(n, k + 1) >= coverage:
        k += 1
    return ordered[k - 1], ordered[n - k]


def _inside_chance(n: int, k: int) -> float:
    """Chance that the median lies between the k-th smallest and the k-th largest of n values."""
    below = sum(math.comb(n, i) for i in range(k)) / 2**n
    return 1.0 - 2.0 * below


# the least chance that the centre of the paired rounds' speedups lies inside a verdict's
# interval (gain_interval): "faster" or "slower" only where all of it is on one side of 1x
DECIDE_COVERAGE = 0.90


def gain_interval(
    values: list[float], coverage: float = MEDIAN_COVERAGE
) -> tuple[float, float] | None:
    """Where the centre of the paired rounds' speedups lies, with at least `coverage` chance:
    the Wilcoxon signed-rank interval (Hodges-Lehmann) on their logarithms. Like median_range it
    needs no normal law and one disturbed round moves it little, but it reads every round's
    size, not only its side of the median: on the same rounds it is narrower (d201's float32
    rounds at load 4: 1.55-1.77x by median_range, 1.58-1.72x by this, 8 rounds). It assumes a round
    errs as often up as down (on the log scale), which ratios of paired runs of the same
    length do. None: too few rounds to reach `coverage` (3 rounds reach 75%, 5 reach 90%)."""
    logs = [math.log(v) for v in values if v and v > 0]
    n = len(logs)
    if n == 0:
        return None
    walsh = sorted((logs[i] + logs[j]) / 2 for i in range(n) for j in range(i, n))
    allowed = (1.0 - coverage) / 2 * 2**n  # subsets of ranks the lower tail may hold
    dropped, cumulative = 0, 0
    for count in _signed_rank_counts(n):
        if cumulative + count > allowed + 1e-9:
            break
        cumulative += count
        dropped += 1
    if dropped == 0:
        return None
    return math.exp(walsh[dropped - 1]), math.exp(walsh[len(walsh) - dropped])


def _signed_rank_counts(n: int) -> list[int]:
    """How many of the 2**n sign patterns give each signed-rank sum 0, 1, ..., n(n+1)/2."""
    counts = [1]
    for rank in range(1, n + 1):
        grown = counts + [0] * rank
        for total, count in enumerate(counts):
            grown[total + rank] += count
        counts = grown
    return counts


def measured_steps(run: dict, warmup: int) -> list[dict]:
    """Steps after warm-up (the first step also pays the script's setup and any compilation)
    and after the batches DataLoader workers prefetched meanwhile (see trials.recorder)."""
    return run["steps"][warmup + run.get("prefetch_steps", 0) :]


def mean_step_s(run: dict, warmup: int, clock: str = "wall_s", per_sample: bool = False):
    """Mean, not median: with DataLoader workers, batches arrive in bursts (several ready at
    once, then a wait), so single steps alternate between ~0 and long; only the mean is stable.
    `clock`: "wall_s" (what the user waits) or "cpu_s" (the training process's CPU time: steadier
    on a busy machine for compute changes, blind to waiting and to loader workers).
    `per_sample`: seconds per sample instead (a fix that changes the batch changes what a step
    is); None when some step's samples were not counted."""
    steps = measured_steps(run, warmup)
    if not steps:
        return None
    seconds = sum(s[clock] for s in steps)
    if not per_sample:
        return seconds / len(steps)
    if any(not s["samples"] for s in steps):
        return None
    return seconds / sum(s["samples"] for s in steps)


def phase_speedups(
    baseline_runs: list[dict],
    variant_runs: list[dict],
    warmup: int,
    phases: tuple[str, ...],
    clock: str = "cpu_s",
) -> Spread:
    """Per paired round, the baseline's step time over the same step with only what the fix
    changed in `phases` taken off: the median step's seconds in those phases, baseline less
    variant, against the baseline's mean step on `clock`. A narrower clock than the whole step
    for a fix that acts on a small part of it (a fused optimizer step: 0.3 ms of a 2 ms step,
    whose whole-step gain the rest's noise hid: -8..6% tried where the optimizer phase alone
    took 0.6x the time); blind to what the fix changes outside those phases. Rounds whose runs
    recorded no phases are left out."""
    ratios = []
    for base, variant in zip(baseline_runs, variant_runs):
        step_s = mean_step_s(base, warmup, clock)
        saved_s = _median_phases_s(base, warmup, phases)
        fixed_s = _median_phases_s(variant, warmup, phases)
        if step_s and saved_s is not None and fixed_s is not None:
            rest_s = step_s - (saved_s - fixed_s)
            if rest_s > 0:
                ratios.append(step_s / rest_s)
    return spread(ratios)


def phase_shares(runs: list[dict], warmup: int) -> dict[str, float]:
    """Share of the runs' measured wall time per recorded phase, every step counted (a mean:
    an epoch's start-up wait is in it, which the diagnosis's typical steps leave out as rare);
    {} where no step recorded phases."""
    wall = 0.0
    phases: dict[str, float] = {}
    for run in runs:
        for step in measured_steps(run, warmup):
            wall += step["wall_s"]
            for phase, seconds in step.get("phases", {}).items():
                phases[phase] = phases.get(phase, 0.0) + seconds
    if wall <= 0 or not phases:
        return {}
    return {phase: seconds / wall for phase, seconds in phases.items()}


def _median_phases_s(run: dict, warmup: int, phases: tuple[str, ...]) -> float | None:
    """Median over the measured steps of their seconds in `phases`; None: no phases recorded."""
    steps = measured_steps(run, warmup)
    if not steps or not any(s.get("phases") for s in steps):
        return None
    return statistics.median(sum(s.get("phases", {}).get(p, 0.0) for p in phases) for s in steps)


def samples_per_s(run: dict, warmup: int) -> float | None:
    steps = measured_steps(run, warmup)
    if not steps or any(s["samples"] is None for s in steps):
        return None
    seconds = sum(s["wall_s"] for s in steps)
    return sum(s["samples"] for s in steps) / seconds if seconds > 0 else None


def paired_speedups(
    baseline_runs: list[dict],
    variant_runs: list[dict],
    warmup: int,
    clock: str = "wall_s",
    per_sample: bool = False,
) -> Spread:
    """Baseline step time / variant step time for each repeat round (runs were interleaved, so
    each pair saw the same machine load); `per_sample`: time per sample (see mean_step_s)."""
    ratios = []
    for base, variant in zip(baseline_runs, variant_runs):
        b = mean_step_s(base, warmup, clock, per_sample)
        v = mean_step_s(variant, warmup, clock, per_sample)
        if b and v:
            ratios.append(b / v)
    return spread(ratios)


def run_to_run_spread(
    baseline_runs: list[dict], warmup: int, clock: str = "wall_s"
) -> float | None:
    """How much the baseline's own repeats disagree: the largest ratio between the mean step
    times of two consecutive baseline runs, minus 1 (0.1: runs of the same code differ by 10%).
    A variant's gain must clear it. None: fewer than two measured baseline runs."""
    times = [mean_step_s(run, warmup, clock) for run in baseline_runs]
    times = [t for t in times if t]
    ratios = [max(a / b, b / a) - 1.0 for a, b in zip(times, times[1:])]
    return max(ratios) if ratios else None


def loss_deviation(reference: list, other: list) -> tuple[float | None, list[float]]:
    """Relative per-step difference of two loss trajectories, over their common steps.

    Each difference is divided by max(|reference loss|, mean |reference loss|), so a loss that
    approaches zero does not turn rounding noise into a huge ratio. None: no losses to compare.
    """
    pairs = [(a, b) for a, b in zip(reference, other) if a is not None and b is not None]
    if not pairs:
        return None, []
    scale = sum(abs(a) for a, _ in pairs) / len(pairs) or 1.0
    deviations = [abs(b - a) / max(abs(a), scale) for a, b in pairs]
    return max(deviations), deviations
