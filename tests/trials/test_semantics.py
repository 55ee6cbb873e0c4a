"""The semantics verdict and the statistics behind the speedups (pure functions)."""

import pytest

from torchdoctor.trials.semantics import judge
from torchdoctor.trials.stats import loss_deviation, paired_speedups


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
