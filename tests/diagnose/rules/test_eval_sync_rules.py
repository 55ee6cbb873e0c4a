"""D3xx evaluation and D4xx sync/transfer rules on hand-built observations."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from rule_builders import evidence_text, good_cpu_run, good_h100_run, good_loader, make_steps, only

from torchdoctor.diagnose.observations import EvaluationObservation, SyncSite, WhatIfTiming
from torchdoctor.diagnose.rules import (
    d104_pin_memory_off as d104,
)
from torchdoctor.diagnose.rules import (
    d301_eval_with_autograd as d301,
)
from torchdoctor.diagnose.rules import (
    d302_eval_in_train_mode as d302,
)
from torchdoctor.diagnose.rules import (
    d303_eval_no_grad as d303,
)
from torchdoctor.diagnose.rules import (
    d401_host_syncs as d401,
)
from torchdoctor.diagnose.rules import (
    d402_blocking_copies as d402,
)
from torchdoctor.diagnose.rules_runner import check_all as run_rules
from torchdoctor.diagnose.whatif.pinned_copy import case_for, measure_copies
from torchdoctor.diagnose.whatif.replay import Replay


def evaluated(**fields):
    """A validation pass of 0.1 s, cut out of the last measured step (seen within the measured
    steps: how often it runs is known)."""
    run = good_cpu_run(
        evaluation=EvaluationObservation(
            forwards=10, seconds=0.1, locations=["train.py:60"], **fields
        )
    )
    run.steps[-1] = dataclasses.replace(run.steps[-1], evaluation_s=0.1)
    return run


def test_d301_fires_on_evaluation_with_grad():
    finding = only(d301.check(evaluated(with_grad=10)), "D301")
    share = 0.1 / (0.1 + 8 * 0.0137)
    assert finding.saving == pytest.approx(share * 0.2)
    assert finding.severity == "warning"
    assert "10 of 10" in evidence_text(finding) and "train.py:60" in evidence_text(finding)


def test_d301_with_no_time_to_gain_says_its_warning_is_for_memory():
    """A validation pass whose inference-mode copy measured no faster (pygcn in the corpus):
    the warning stays, for the activations kept, and the evidence says that is why."""
    run = evaluated(with_grad=10)
    run.whatif.timings = [
        WhatIfTiming("evaluation.inference_mode", "evaluation forward", 0.004, 0.0041, 5, "x")
    ]
    finding = only(d301.check(run), "D301")
    assert finding.saving == 0.0 and finding.saving_basis == "measured"
    assert finding.severity == "warning" and "for memory" in evidence_text(finding)
    run.whatif.timings[0].alternative_s = 0.002  # half the time: the time is the reason
    assert "for memory" not in evidence_text(only(d301.check(run), "D301"))


def test_d301_silent_under_inference_mode_or_no_grad():
    assert d301.check(good_cpu_run()) == []
    assert d301.check(evaluated(under_no_grad=10)) == []


def test_d302_is_an_error_for_train_mode_eval_of_dropout_model():
    finding = only(
        d302.check(evaluated(under_inference_mode=10, in_train_mode=10, train_mode_sensitive=True)),
        "D302",
    )
    assert finding.severity == "error"
    assert "10 of 10" in evidence_text(finding) and "1 Dropout" in evidence_text(finding)
    assert "model.eval()" in finding.fix


def test_d302_states_the_measured_gain_of_eval_mode_on_the_train_mode_forwards():
    """Dropout's masks and BatchNorm's batch statistics cost time: with the eval-mode what-if
    measured, the saving is the train-mode forwards' share times its gain (none when no faster);
    without it, none (the fix is for correctness)."""
    run = evaluated(under_inference_mode=10, in_train_mode=5, train_mode_sensitive=True)
    unmeasured = only(d302.check(run), "D302")
    assert unmeasured.saving == 0.0 and unmeasured.saving_basis == "not measured"
    run.whatif.timings = [
        WhatIfTiming("evaluation.eval_mode", "evaluation forward", 0.004, 0.003, 5, "model.eval()")
    ]
    finding = only(d302.check(run), "D302")
    share = 0.1 / (0.1 + 8 * 0.0137) * 5 / 10
    assert finding.saving == pytest.approx(share * 0.25)
    assert finding.saving_basis == "measured" and "model.eval()" in finding.saving_how
    assert finding.severity == "error"
    run.whatif.timings[0].alternative_s = 0.005  # slower in eval mode: measured, no saving
    slower = only(d302.check(run), "D302")
    assert slower.saving == 0.0 and slower.saving_basis == "measured"


def test_d302_silent_in_eval_mode_or_for_mode_insensitive_models():
    assert d302.check(evaluated(under_inference_mode=10)) == []
    assert d302.check(evaluated(under_inference_mode=10, in_train_mode=10)) == []


def test_d303_is_info_for_no_grad_eval():
    finding = only(d303.check(evaluated(under_no_grad=10)), "D303")
    assert finding.severity == "info" and "inference_mode" in finding.fix
    assert d303.check(good_cpu_run()) == []


def synced(run, per_step=2.0):
    run.sync_sites = [
        SyncSite(kind="item", location="train.py:52", count=16, per_step=per_step),
        SyncSite(kind="print", location="train.py:55", count=8, per_step=1.0),
    ]
    return run


def test_d401_on_cuda_uses_gpu_idle_time_not_explained_by_data():
    run = synced(good_h100_run())
    for step in run.steps:
        step.gpu_idle_s = 0.0032  # 0.3 ms of it is data + copies
    finding = only(d401.check(run), "D401")
    assert finding.saving == pytest.approx((0.0032 - 0.0003) / run.steps[0].wall_s)
    assert finding.severity == "warning"
    text = evidence_text(finding)
    assert "3 host-device sync(s)" in text and "train.py:52: item 2 per step" in text


def test_d401_on_cpu_is_info_with_no_saving_when_the_reads_took_no_time():
    finding = only(d401.check(synced(good_cpu_run())), "D401")
    assert finding.severity == "info" and finding.saving == 0.0
    assert "train.py:55" in evidence_text(finding)


def test_d401_saving_is_the_measured_time_inside_the_reads():
    run = synced(good_cpu_run())
    run.sync_sites[0].seconds_per_step = 0.0004
    run.sync_sites[1].seconds_per_step = 0.0001
    finding = only(d401.check(run), "D401")
    # 3 reads per step, read every 10th step instead: 1/30 of them stay
    assert finding.saving == pytest.approx(0.0005 * (1 - 1 / 30) / 0.0137)
    assert finding.saving_basis == "measured" and finding.severity == "info"  # CPU: conversion
    assert "500.0 µs per step inside the reads" in evidence_text(finding)
    cuda = synced(good_h100_run())  # no GPU idle time measured: the wait inside the reads
    cuda.sync_sites[0].seconds_per_step = 0.003
    for step in cuda.steps:
        step.gpu_idle_s = None
    finding = only(d401.check(cuda), "D401")
    assert finding.saving == pytest.approx(0.003 * (1 - 1 / 30) / cuda.steps[0].wall_s)
    assert "wait for the GPU's queue" in evidence_text(finding)


def test_d401_silent_without_per_step_syncs():
    assert d401.check(good_h100_run()) == []
    rare = good_cpu_run(sync_sites=[SyncSite("item", "train.py:9", count=1, per_step=0.1)])
    assert d401.check(rare) == []


def copy_bound_run(pinned: float, non_blocking: float, loader_pinned: bool = True):
    run = good_h100_run(
        loaders=[good_loader(pin_memory=loader_pinned)],
        steps=make_steps(h2d=0.002, forward=0.003, backward=0.005),
    )
    run.transfers.pinned_fraction = pinned
    run.transfers.non_blocking_fraction = non_blocking
    run.transfers.locations = ["train.py:41"]
    return run


def test_d402_fires_on_blocking_copies_from_pinned_memory():
    finding = only(d402.check(copy_bound_run(pinned=1.0, non_blocking=0.0)), "D402")
    assert finding.saving == pytest.approx(0.2 * 0.5)
    assert "non_blocking=True" in finding.fix and "train.py:41" in evidence_text(finding)


def test_d402_fires_on_pageable_copies_built_by_hand():
    finding = only(d402.check(copy_bound_run(pinned=0.0, non_blocking=0.0)), "D402")
    assert "pin_memory()" in finding.fix and "0% of the bytes" in evidence_text(finding)


def test_d402_leaves_unpinned_loaders_to_d104_and_is_silent_when_fine():
    assert d402.check(copy_bound_run(pinned=0.0, non_blocking=0.0, loader_pinned=False)) == []
    assert d402.check(copy_bound_run(pinned=1.0, non_blocking=1.0)) == []
    assert d402.check(good_cpu_run()) == []


def test_d401_on_cuda_ignores_reads_of_cpu_tensors():
    run = good_h100_run(
        sync_sites=[
            SyncSite(kind="item", location="train.py:9", count=16, per_step=2.0, device="cpu")
        ]
    )
    assert d401.check(run) == []


def test_d301_measures_evaluation_within_the_measured_steps_when_cut_out():
    run = evaluated(with_grad=10)
    for step in run.steps:
        step.evaluation_s = 0.0137  # as long as each training step
    finding = only(d301.check(run), "D301")
    assert finding.saving == pytest.approx(0.5 * 0.2)


def test_a_run_ending_within_warm_up_gets_no_per_step_findings():
    """QA2-9: one warm-up step (a --dry-run) with evaluation .item() reads and a per-sample
    loader: the rules that need measured steps stay silent; the static D303 keeps no saving."""
    run = good_cpu_run(
        loaders=[good_loader(num_workers=0, workers_spawned=0, item_s=2e-4, collate_s=5e-3)],
        steps=make_steps(n=1, batch_size=4, data=0.01, forward=0.001, backward=0.001),
    )
    run.sync_sites = [SyncSite(kind="item", location="m.py:53", count=2, per_step=2, device="cpu")]
    run.evaluation.under_no_grad, run.evaluation.under_inference_mode = 4, 0
    measured = {f.id for f in run_rules(run)}
    assert {"D108", "D401"} <= measured  # the same observation, measured: per-step findings
    run.warmup_only = True
    findings = run_rules(run)
    assert [f.id for f in findings] == ["D303"]
    assert findings[0].saving == 0.0 and "%" not in " ".join(findings[0].evidence)


# D104/D402 read the pinned-copy what-if (CUDA only: tested on recorded observations): a
# measured saving replaces "half the copy time", never above the copy time itself, and a fix
# measured no faster is not reported.
def pinned_copy_timed(run, case: str, as_run_s: float, alternative_s: float):
    run.whatif.timings.append(
        WhatIfTiming(f"h2d.{case}", "copy, forward and backward", as_run_s, alternative_s, 5, "x")
    )
    return run


def test_d104_d402_each_read_the_pinned_copy_timing_of_their_own_case():
    assert case_for(1.0, 0.0, unpinned_loader=False) == "non_blocking"
    assert case_for(0.0, 0.0, unpinned_loader=False) == "pinned_by_hand"
    assert case_for(0.0, 0.0, unpinned_loader=True) == "pin_memory"
    assert case_for(1.0, 1.0, unpinned_loader=False) is None  # nothing to fix

    # h2d 2 ms, forward 3 ms, backward 5 ms: the whole step; the copy is 20% of it
    run = pinned_copy_timed(
        copy_bound_run(pinned=1.0, non_blocking=0.0), "non_blocking", 0.010, 0.009
    )
    finding = only(d402.check(run), "D402")
    # 10% of the copy + forward + backward time, which is the whole step here
    assert finding.saving_basis == "measured" and finding.saving == pytest.approx(0.1)
    assert "Measured:" in evidence_text(finding)
    pinned_copy_timed(run, "pinned_by_hand", 0.010, 0.002)  # another case's timing: not D402's here
    assert only(d402.check(run), "D402").saving == pytest.approx(0.1)

    run = pinned_copy_timed(
        copy_bound_run(0.0, 0.0, loader_pinned=False), "pin_memory", 0.010, 0.002
    )
    finding = only(d104.check(run), "D104")
    # 80% of copy + forward + backward measured, but a copy gives back at most its own 20%
    assert finding.saving_basis == "measured" and finding.saving == pytest.approx(0.2)


def test_d104_d402_keep_estimates_untimed_and_claim_nothing_measured_slower():
    finding = only(d402.check(copy_bound_run(pinned=0.0, non_blocking=0.0)), "D402")
    assert finding.saving_basis == "estimated" and finding.saving_how.startswith("estimate:")
    run = pinned_copy_timed(
        copy_bound_run(pinned=0.0, non_blocking=0.0), "pinned_by_hand", 0.010, 0.011
    )
    assert d402.check(run) == []
    run = pinned_copy_timed(
        copy_bound_run(0.0, 0.0, loader_pinned=False), "pin_memory", 0.010, 0.010
    )
    assert d104.check(run) == []


def test_pinned_copy_probe_times_nothing_on_a_cpu_replay():
    model = torch.nn.Linear(4, 2)
    replay = Replay(model, (torch.randn(3, 4),), {}, "cpu")
    assert measure_copies(replay, "pin_memory", 0.5) == []


def test_pinned_copy_probe_is_planned_for_a_cuda_runs_copies_only():
    from torchdoctor.diagnose.whatif import _Plan

    for run, planned in (
        (copy_bound_run(pinned=1.0, non_blocking=0.0), ["pinned non-blocking copies"]),
        (copy_bound_run(pinned=1.0, non_blocking=1.0), []),  # pinned and non-blocking already
        (good_cpu_run(), []),  # nothing copied to a device
    ):
        plan = _Plan(None, run)
        plan._plan_copies()
        assert [label for _, label, _ in plan.items] == planned
