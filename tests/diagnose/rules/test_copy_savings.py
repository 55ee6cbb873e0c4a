"""Rules D104 and D402 read the pinned-copy what-if (CUDA only, so tested here on recorded
observations): a measured saving replaces the "half the copy time" estimate, never above the copy
time itself, and a fix measured no faster is not reported."""

from __future__ import annotations

import pytest
import torch
from rule_builders import evidence_text, good_h100_run, good_loader, make_steps, only

from torchdoctor.diagnose.observations import WhatIfTiming
from torchdoctor.diagnose.rules import d104_pin_memory_off as d104
from torchdoctor.diagnose.rules import d402_blocking_copies as d402
from torchdoctor.diagnose.whatif.pinned_copy import case_for, measure_copies
from torchdoctor.diagnose.whatif.replay import Replay


def copy_bound_run(pinned: float, non_blocking: float, loader_pinned: bool = True):
    run = good_h100_run(
        loaders=[good_loader(pin_memory=loader_pinned)],
        steps=make_steps(h2d=0.002, forward=0.003, backward=0.005),
    )
    run.transfers.pinned_fraction = pinned
    run.transfers.non_blocking_fraction = non_blocking
    return run


def timed(run, case: str, as_run_s: float, alternative_s: float):
    run.whatif.timings.append(
        WhatIfTiming(f"h2d.{case}", "copy, forward and backward", as_run_s, alternative_s, 5, "x")
    )
    return run


def test_each_rule_reads_the_timing_of_its_own_case():
    assert case_for(1.0, 0.0, unpinned_loader=False) == "non_blocking"
    assert case_for(0.0, 0.0, unpinned_loader=False) == "pinned_by_hand"
    assert case_for(0.0, 0.0, unpinned_loader=True) == "pin_memory"
    assert case_for(1.0, 1.0, unpinned_loader=False) is None  # nothing to fix

    # h2d 2 ms, forward 3 ms, backward 5 ms: the whole step; the copy is 20% of it
    run = timed(copy_bound_run(pinned=1.0, non_blocking=0.0), "non_blocking", 0.010, 0.009)
    finding = only(d402.check(run), "D402")
    # 10% of the copy + forward + backward time, which is the whole step here
    assert finding.saving_basis == "measured" and finding.saving == pytest.approx(0.1)
    assert "Measured:" in evidence_text(finding)
    timed(run, "pinned_by_hand", 0.010, 0.002)  # another case's timing: not D402's here
    assert only(d402.check(run), "D402").saving == pytest.approx(0.1)

    run = timed(copy_bound_run(0.0, 0.0, loader_pinned=False), "pin_memory", 0.010, 0.002)
    finding = only(d104.check(run), "D104")
    # 80% of copy + forward + backward measured, but a copy gives back at most its own 20%
    assert finding.saving_basis == "measured" and finding.saving == pytest.approx(0.2)


def test_estimates_stay_without_a_timing_and_no_saving_is_claimed_when_measured_slower():
    finding = only(d402.check(copy_bound_run(pinned=0.0, non_blocking=0.0)), "D402")
    assert finding.saving_basis == "estimated" and finding.saving_how.startswith("estimate:")
    run = timed(copy_bound_run(pinned=0.0, non_blocking=0.0), "pinned_by_hand", 0.010, 0.011)
    assert d402.check(run) == []
    run = timed(copy_bound_run(0.0, 0.0, loader_pinned=False), "pin_memory", 0.010, 0.010)
    assert d104.check(run) == []


def test_the_probe_times_nothing_on_a_cpu_replay():
    model = torch.nn.Linear(4, 2)
    replay = Replay(model, (torch.randn(3, 4),), {}, "cpu")
    assert measure_copies(replay, "pin_memory", 0.5) == []
