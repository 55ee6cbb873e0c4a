"""The semantics verdict and the statistics behind the speedups (pure functions)."""

import pytest

from torchdoctor.trials import plausibility
from torchdoctor.trials.analysis import Noise, check_combination, compare, summarize, verdict
from torchdoctor.trials.report import ConfigResult, Semantics, Spread, VariantResult
from torchdoctor.trials.runner import RunOutcome
from torchdoctor.trials.semantics import judge
from torchdoctor.trials.stats import (
    loss_deviation,
    mean_step_s,
    measured_steps,
    paired_speedups,
    run_to_run_spread,
)


def run(losses, step_s=0.1):
    return {"steps": [{"wall_s": step_s, "cpu_s": step_s, "samples": 8, "loss": v} for v in losses]}


def test_identical_trajectories_are_kept_and_a_drift_beyond_tolerance_is_changed():
    base = [run([2.0, 1.5, 1.2]), run([2.0, 1.5, 1.2])]
    kept = judge(base, [run([2.0, 1.5, 1.2])], 1e-6, "exact")
    assert kept.verdict == "kept" and kept.max_deviation == 0.0 and kept.baseline_noise == 0.0
    changed = judge(base, [run([2.0, 1.5, 1.3])], 1e-3, "precision")
    assert changed.verdict == "changed" and changed.first_changed_step == 2
    assert abs(changed.max_deviation - 0.1 / (4.7 / 3)) < 1e-9  # scale: mean |loss| > 1.2


def test_a_baseline_that_does_not_reproduce_cannot_vouch_for_a_variant():
    base = [run([2.0, 1.5]), run([2.0, 1.6])]
    assert judge(base, [run([2.0, 1.5])], 1e-6, "exact").verdict == "unverified"


def test_no_loss_observed_is_unknown_not_kept():
    assert judge([run([None])], [run([None])], 1e-6, "exact").verdict == "unknown"


def test_paired_speedups_skip_warmup_and_pair_rounds():
    base = [run([1, 1, 1], 0.2), run([1, 1, 1], 0.3)]
    variant = [run([1, 1, 1], 0.1), run([1, 1, 1], 0.1)]
    speedup = paired_speedups(base, variant, warmup=1)
    assert (speedup.low, speedup.median, speedup.high) == pytest.approx((2.0, 2.5, 3.0))


def test_loss_deviation_uses_the_trajectory_scale_near_zero():
    worst, _ = loss_deviation([1.0, 1e-9], [1.0, 2e-9])
    assert worst < 1e-8  # a 1e-9 absolute change is not a 100% change


def test_random_draws_differ_needs_a_reproducible_baseline_that_drew_in_the_loader():
    def drew(r):
        return {**r, "loader_draws_random": True}

    base = [drew(run([2.0, 1.5])), drew(run([2.0, 1.5]))]
    moved = judge(base, [run([2.0, 1.51])], 1e-6, "exact", moves_data_randomness=True)
    assert moved.verdict == "random draws differ"
    # the same difference from a fix that does not move batch building stays "changed"
    assert judge(base, [run([2.0, 1.51])], 1e-6, "exact").verdict == "changed"
    # a baseline whose batches drew nothing: the difference is real
    plain = [run([2.0, 1.5]), run([2.0, 1.5])]
    assert (
        judge(plain, [run([2.0, 1.51])], 1e-6, "x", moves_data_randomness=True).verdict == "changed"
    )


def test_prefetched_steps_are_discarded_after_warm_up():
    record = run([1.0] * 6, 0.1)
    record["steps"][1]["wall_s"] = record["steps"][2]["wall_s"] = 0.0  # drained from the queue
    record["prefetch_steps"] = 2
    assert mean_step_s(record, warmup=1) == pytest.approx(0.1)
    assert len(measured_steps(record, warmup=1)) == 3


def test_baseline_spread_is_the_largest_ratio_between_consecutive_runs():
    base = [run([1, 1], 0.1), run([1, 1], 0.125), run([1, 1], 0.1)]
    assert run_to_run_spread(base, warmup=0) == pytest.approx(0.25)
    assert run_to_run_spread(base[:1], warmup=0) is None


def _spread(*values):
    return Spread(sorted(values)[len(values) // 2], min(values), max(values), len(values))


def test_faster_needs_two_rounds_above_one_and_a_median_beyond_the_baseline_spread():
    assert verdict("ok", _spread(1.3), "kept") == "no clear gain"  # one noisy run
    assert verdict("ok", _spread(1.2, 1.3, 1.4), "kept", 0.05) == "faster"
    assert verdict("ok", _spread(1.2, 1.3, 1.4), "kept", 0.40) == "no clear gain"
    assert verdict("ok", _spread(0.9, 1.3, 1.4), "kept") == "no clear gain"  # overlaps 1
    assert verdict("ok", _spread(0.7, 0.75, 0.8), "kept", 0.1) == "slower"
    assert verdict("ok", _spread(1.2, 1.3, 1.4), "random draws differ") == "faster"
    assert verdict("ok", _spread(1.2, 1.3, 1.4), "changed") == "changes results"


def _variant(name, fixes, speedup, semantics_verdict="kept"):
    config = ConfigResult(
        name, fixes, 3, _spread(0.1), _spread(1.0), _spread(0.1), None, "process_rss", [], 1.0
    )
    semantics = Semantics(semantics_verdict, 1e-3, "", 0.0, None, 3, 0.0)
    return VariantResult(
        config, speedup, None, None, semantics, verdict("ok", speedup, semantics_verdict)
    )


def test_a_combination_far_beyond_the_product_of_its_parts_is_suspicious():
    parts = [
        _variant("workers", ["workers"], _spread(0.8, 0.81, 0.85)),
        _variant("compile", ["compile"], _spread(0.9, 0.95, 1.0)),
    ]
    combined = _variant("all", ["workers", "compile"], _spread(4.0, 4.3, 4.6))
    check_combination([*parts, combined])
    assert combined.verdict == "suspicious"
    plausible = _variant("all", ["workers", "compile"], _spread(0.9, 1.0, 1.1))
    check_combination([*parts, plausible])
    assert plausible.verdict == "no clear gain"
    # a part slower alone counts as 1x: float32 1.4x with a costly autocast alone, all 1.7x
    helped = [
        _variant("float32", ["float32"], _spread(1.1, 1.4, 1.7)),
        _variant("autocast", ["autocast"], _spread(0.6, 0.7, 0.9)),
    ]
    together = _variant("all", ["float32", "autocast"], _spread(1.5, 1.7, 1.7))
    check_combination([*helped, together])
    assert together.verdict == "faster"


def test_a_combination_keeps_a_part_s_changed_semantics():
    parts = [
        _variant("workers", ["workers"], _spread(2.0, 2.1, 2.2), "random draws differ"),
        _variant("inference_mode", ["inference_mode"], _spread(1.0, 1.0, 1.1), "changed"),
    ]
    combined = _variant(
        "all", ["workers", "inference_mode"], _spread(2.0, 2.1, 2.2), "random draws differ"
    )
    check_combination([*parts, combined])
    assert combined.semantics.verdict == "changed" and combined.verdict == "changes results"


def _outcome(step_s, cpu_s):
    steps = [{"wall_s": step_s, "cpu_s": cpu_s, "samples": 8, "loss": 1.0}] * 3
    result = {
        "failed_fixes": {},
        "status": "stopped",
        "used_fixes": ["autocast"],
        "steps": steps,
        "peak_memory_bytes": 1,
        "memory_source": "process_rss",
    }
    return RunOutcome("x", result, 0, "", 1.0)


def _compare(fixes, base, var, noise):
    base_outcomes = [_outcome(*b) for b in base]
    var_outcomes = [_outcome(*v) for v in var]
    return compare(
        summarize("baseline", [], base_outcomes, 1),
        base_outcomes,
        summarize("v", fixes, var_outcomes, 1),
        var_outcomes,
        1,
        noise,
    )


def test_a_compute_fix_on_cpu_needs_its_cpu_time_to_agree():
    base = [(0.2, 0.1)] * 3
    noise = Noise(0.0, 0.0, "cpu", None)
    # wall 2x faster, the process's own CPU time unchanged: other jobs' load, not the fix
    assert _compare(["autocast"], base, [(0.1, 0.1)] * 3, noise).verdict == "no clear gain"
    assert _compare(["autocast"], base, [(0.1, 0.05)] * 3, noise).verdict == "faster"
    # a loader fix is judged on wall time: waiting for data costs no CPU time
    assert _compare(["workers"], base, [(0.1, 0.1)] * 3, noise).verdict == "faster"


def test_a_speedup_beyond_the_phases_the_fix_acts_on_is_suspicious():
    base = [(0.2, 0.2)] * 3
    breakdown = {"data": 0.5, "forward": 0.2, "backward": 0.2, "optimizer": 0.0, "other": 0.1}
    noise = Noise(0.0, 0.0, "cpu", breakdown)
    assert plausibility.amdahl_bound(["autocast"], breakdown) == pytest.approx(1 / 0.6)
    # model phases are 40% of the step: at most 1/(1-0.4) = 1.67x; 2x is noise
    assert _compare(["autocast"], base, [(0.1, 0.1)] * 3, noise).verdict == "suspicious"
    assert _compare(["autocast"], base, [(0.16, 0.16)] * 3, noise).verdict == "faster"
    # three rounds are needed: two agreeing runs are still no verdict
    assert _compare(["autocast"], base[:2], [(0.16, 0.16)] * 2, noise).verdict == "no clear gain"


def test_compile_on_a_model_with_active_dropout_is_unverified_not_changed():
    base = [dict(run([2.0, 1.5, 1.2]), dropout_active=True) for _ in range(2)]
    other_masks = [run([2.0, 1.55, 1.31])]
    judged = judge(base, other_masks, 1e-3, "compile", redraws_dropout=True)
    assert judged.verdict == "unverified" and "Dropout" in judged.tolerance_reason
    # Without active dropout the same drift is a real change.
    plain = [run([2.0, 1.5, 1.2]), run([2.0, 1.5, 1.2])]
    assert judge(plain, other_masks, 1e-3, "compile", redraws_dropout=True).verdict == "changed"
    # And other fixes on a dropout model are still judged strictly.
    assert judge(base, other_masks, 1e-3, "precision").verdict == "changed"


def test_the_trial_recorder_sees_active_dropout_only_in_training():
    import torch

    from torchdoctor.trials.recorder import _has_active_dropout

    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout(0.1))
    assert _has_active_dropout(model)
    assert not _has_active_dropout(model.eval())
    assert not _has_active_dropout(torch.nn.Sequential(torch.nn.Dropout(0.0)))


def test_a_small_gain_whose_paired_rounds_agree_is_faster_on_cpu_time_under_load():
    # six rounds; other jobs slow whole runs by up to 40% (CPU) and 3x (wall), both runs of a
    # round alike; the fix takes 5% off the process's own work
    load = [1.0, 1.4, 1.1, 1.3, 1.2, 1.05]
    walls = [1.0, 3.0, 1.5, 2.5, 0.8, 2.0]
    base = [(0.1 * w, 0.1 * f) for f, w in zip(load, walls)]
    odd = [i % 2 for i in range(len(load))]
    fix = [(0.1 * w * (1.3 if o else 0.8), 0.1 * f / 1.05) for f, w, o in zip(load, walls, odd)]
    same = [(0.1 * w, 0.1 * f * (1.01 if o else 0.99)) for f, w, o in zip(load, walls, odd)]
    noise = Noise(1.0, 0.4, "cpu", None)  # the baseline's runs differ by 40%: no old-rule verdict
    result = _compare(["autocast"], base, fix, noise)
    assert verdict("ok", result.cpu_speedup, "kept", noise.cpu) == "faster"
    assert result.verdict == "faster" and result.decided_on == "cpu"
    assert result.interval[0] > 1.0 and result.interval[0] == pytest.approx(1.05, rel=0.01)
    assert verdict("ok", result.speedup, "kept", noise.wall) == "no clear gain"  # wall: noise
    # the same rounds with no gain: no clear gain
    unchanged = _compare(["autocast"], base, same, noise)
    assert unchanged.verdict == "no clear gain"
    assert unchanged.interval[0] < 1.0 < unchanged.interval[1]
    # a loader fix is read on wall time, where these rounds decide nothing
    workers = _compare(["workers"], base, fix, noise)
    assert workers.decided_on == "wall" and workers.verdict == "no clear gain"


def test_the_report_says_which_clock_decided_and_on_what():
    from torchdoctor.trials.render import decided_line

    rounds = _spread(1.04, 1.05, 1.06, 1.05, 1.07, 1.05)
    decided = _variant("float32", ["float32"], _spread(0.8, 1.3, 2.0))
    decided.cpu_speedup, decided.decided_on, decided.interval = rounds, "cpu", [1.045, 1.06]
    decided.verdict = "faster"
    assert decided_line(decided) == (
        "float32: faster on CPU time (the training process's own work): "
        "1.04-1.06x (90% paired interval, 6 rounds)"
    )
    undecided = _variant("fused_optimizer", ["fused_optimizer"], _spread(0.8, 1.3, 2.0))
    undecided.cpu_speedup, undecided.decided_on = rounds, "cpu"
    undecided.interval, undecided.verdict = [0.88, 1.22], "no clear gain"
    assert decided_line(undecided) == (
        "fused_optimizer: no clear gain on CPU time (the training process's own work): "
        "0.88-1.22x (90% paired interval, 6 rounds): a gain under 18% or a loss under 14% is "
        "within the noise of these rounds"
    )
    few = _variant("workers", ["workers"], _spread(1.2, 1.3, 1.4))
    assert decided_line(few) == (
        "workers: faster on wall time: median 1.30x, rounds 1.20-1.40x (3 rounds)"
    )


def _with_optimizer_phase(step_s, optimizer_s):
    """A run whose steps took `step_s` each, `optimizer_s` of it in the optimizer phase."""
    result = _outcome(step_s, step_s).result
    result["steps"] = [{**s, "phases": {"optimizer": optimizer_s}} for s in result["steps"]]
    return RunOutcome("x", result, 0, "", 1.0)


# the rest of the step's time, round by round: other jobs' load swings it by +-30%
SWINGS = [1.0, 1.3, 0.7, 1.2, 0.8]


def _swinging_fused_rounds():
    """Baseline and fused-optimizer rounds of a 10 ms step swinging by SWINGS, whose optimizer
    phase takes 1 ms, 0.5 ms with the fix in every round."""
    base = [_with_optimizer_phase(0.010 * s, 0.001) for s in SWINGS]
    fused = [_with_optimizer_phase(0.010 / s, 0.0005) for s in SWINGS]
    return base, fused


def test_a_fused_optimizer_is_also_read_on_its_own_phase_a_narrower_clock():
    """multi_profiler_sgd_zero_fill at load 20: the fused step's whole-step CPU gains were
    -25%..20% over three rounds, the optimizer phase's own saving over the step 0.3-4%. Here
    the rest of the step swings a round by +-30% (other jobs' load); the optimizer phase, 1 ms
    of a 10 ms step, takes 0.5 ms with the fix in every round."""

    base, fused = _swinging_fused_rounds()
    result = compare(
        summarize("baseline", [], base, 1),
        base,
        summarize("v", ["fused_optimizer"], fused, 1),
        fused,
        1,
        Noise(0.0, 0.0, "cpu", None),
    )
    assert result.phase_clock == ("optimizer",)
    whole = sorted(result.cpu_speedup.values)
    assert whole[0] < 0.7 and whole[-1] > 1.5  # the whole step's rounds: the load's swings
    # each round: the step over the same step with the optimizer's 0.5 ms taken off
    expected = [0.010 * s / (0.010 * s - 0.0005) for s in SWINGS]
    assert result.phase_speedup.values == pytest.approx(expected)
    # a fix without a phase of its own is read on the whole step only
    assert _compare(["autocast"], [(0.2, 0.1)] * 3, [(0.1, 0.05)] * 3, None).phase_speedup is None


def test_a_fused_optimizers_verdict_reads_its_own_phase_and_says_so():
    """The rounds of the test above: the whole step's CPU time swings by +-30% a round, which
    decides nothing about a 0.5 ms saving in a 10 ms step; the optimizer phase decides it, and
    the report names that clock. A fix without a phase of its own keeps the whole step."""
    from torchdoctor.trials.render import decided_line

    base, fused = _swinging_fused_rounds()
    noise = Noise(0.4, 0.4, "cpu", None)  # the baseline's whole steps differ by 40%
    result = compare(
        summarize("baseline", [], base, 1),
        base,
        summarize("fused_optimizer", ["fused_optimizer"], fused, 1),
        fused,
        1,
        noise,
    )
    assert verdict("ok", result.cpu_speedup, "kept", noise.cpu) == "no clear gain"
    assert result.decided_on == "phase" and result.verdict == "faster"
    assert result.interval[0] > 1.0
    assert decided_line(result).startswith(
        "fused_optimizer: faster on the optimizer phase's time taken off the step: "
    )
    # where the rounds recorded no phases, the whole step decides, as before
    plain = [_with_optimizer_phase(0.010 * s, 0.001) for s in SWINGS]
    for run in plain:
        run.result["steps"] = [
            {k: v for k, v in s.items() if k != "phases"} for s in run.result["steps"]
        ]
    whole = compare(
        summarize("baseline", [], plain, 1),
        plain,
        summarize("fused_optimizer", ["fused_optimizer"], plain, 1),
        plain,
        1,
        noise,
    )
    assert whole.decided_on == "cpu"


def test_the_amdahl_bound_counts_the_baselines_own_epoch_start_ups():
    """d103_workers_respawned: `--try persistent_workers` gained 96% of the wall time and was
    called suspicious: the bound came from the diagnosis's typical steps, which leave out the
    epoch starts' waits for respawned workers (the phase the fix shortens) as rare outliers.
    The baseline's own steps, every one counted, carry those waits: the bound is theirs."""

    def outcome(step_s, data_s):
        result = _outcome(step_s, step_s).result
        result["steps"] = [{**result["steps"][0], "phases": {"data": data_s}}] * 3
        result["used_fixes"] = ["persistent_workers"]
        return RunOutcome("x", result, 0, "", 1.0)

    base = [outcome(0.100, 0.090) for _ in range(3)]  # 90% of the step waits for workers
    fixed = [outcome(0.012, 0.002) for _ in range(3)]  # 8.3x
    typical = {"data": 0.10, "forward": 0.45, "backward": 0.45}  # the diagnosis's typical steps
    result = compare(
        summarize("baseline", [], base, 0),
        base,
        summarize("persistent_workers", ["persistent_workers"], fixed, 0),
        fixed,
        0,
        Noise(0.0, 0.0, "cpu", typical),
    )
    assert result.decided_on == "wall" and result.verdict == "faster"
    # steps that recorded no phases: the diagnosis's breakdown bounds it, as before
    plain = [_outcome(0.100, 0.100) for _ in range(3)]
    quick = [_outcome(0.012, 0.012) for _ in range(3)]
    for run in plain + quick:
        run.result["used_fixes"] = ["persistent_workers"]
    bounded = compare(
        summarize("baseline", [], plain, 0),
        plain,
        summarize("persistent_workers", ["persistent_workers"], quick, 0),
        quick,
        0,
        Noise(0.0, 0.0, "cpu", typical),
    )
    assert bounded.verdict == "suspicious"
    # the diagnosis's share where it is the larger: a trial's wall-clock phases on a loaded
    # machine (preemption wherever it fell) never tighten the bound
    skewed = [outcome(0.100, 0.010) for _ in range(3)]
    for run in skewed:
        run.result["steps"] = [{**s, "phases": {"data": 0.001}} for s in run.result["steps"]]
    quick = [outcome(0.050, 0.001) for _ in range(3)]
    loose = compare(
        summarize("baseline", [], skewed, 0),
        skewed,
        summarize("persistent_workers", ["persistent_workers"], quick, 0),
        quick,
        0,
        Noise(0.0, 0.0, "cpu", {"data": 0.6}),
    )
    assert loose.verdict == "faster"  # 2x within the diagnosis's bound of 2.5x
