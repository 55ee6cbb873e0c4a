"""Rules read the what-if probes' measurements (run.whatif): a measured saving replaces the rule's
constant, is labelled "measured", and changes the ranking where the constant was wrong."""

from __future__ import annotations

import dataclasses

import pytest
from rule_builders import (
    evidence_text,
    good_cpu_run,
    good_loader,
    h100_environment,
    make_steps,
    only,
)
from test_compute_rules import (
    amp_conv_run,
    conv_h100_run,
    fp32_h100_run,
    optimizer_bound_run,
    overhead_run,
)
from test_data_rules import data_bound_run

from torchdoctor.diagnose.findings import rank
from torchdoctor.diagnose.observations import (
    EvaluationObservation,
    PrecisionObservation,
    WhatIfTiming,
)
from torchdoctor.diagnose.rules import (
    d101_dataloader_main_process as d101,
)
from torchdoctor.diagnose.rules import (
    d201_float64_compute as d201,
)
from torchdoctor.diagnose.rules import (
    d202_batch_too_small as d202,
)
from torchdoctor.diagnose.rules import (
    d204_no_autocast as d204,
)
from torchdoctor.diagnose.rules import (
    d205_cudnn_benchmark_off as d205,
)
from torchdoctor.diagnose.rules import (
    d206_tf32_off as d206,
)
from torchdoctor.diagnose.rules import (
    d207_channels_last_missing as d207,
)
from torchdoctor.diagnose.rules import (
    d210_optimizer_not_fused as d210,
)
from torchdoctor.diagnose.rules import (
    d220_zero_grad_fills_zeros as d220,
)
from torchdoctor.diagnose.rules import (
    d301_eval_with_autograd as d301,
)
from torchdoctor.diagnose.rules._common import typical_step_s
from torchdoctor.diagnose.rules._unprobed import step_without_probes_s
from torchdoctor.diagnose.rules_runner import check_all
from torchdoctor.diagnose.step_analysis import analyze, step_profile
from torchdoctor.trials.fixes.batch_size import factor_for
from torchdoctor.trials.observation_io import dump_run_observation, load_run_observation


def workers(as_run_s: float, with_workers_s: float, n: int = 1) -> WhatIfTiming:
    return WhatIfTiming("data.workers", "training step", as_run_s, with_workers_s, 5,
                        f"num_workers={n}", startup_s=0.1)  # fmt: skip


def test_d101_is_dropped_when_workers_measure_slower_and_loses_the_top_rank():
    run = data_bound_run()
    run.steps = make_steps(data=0.030, forward=0.004, backward=0.005, optimizer=0.010)
    run.optimizers[0].foreach_or_fused = None  # D210 applies too (25% of the step)
    assert check_all(run)[0].id == "D101"  # today's constant: workers hide the data time
    run.whatif.timings = [workers(0.040, 0.048)]  # measured: 0.83x, as `demo` on 2 busy cores
    ranked = [f.id for f in check_all(run)]
    assert "D101" not in ranked and ranked[0] == "D210"


def test_d101_saving_and_worker_count_come_from_the_measurement():
    run = data_bound_run()
    run.whatif.timings = [workers(0.040, 0.032, 1), workers(0.040, 0.020, 3)]
    finding = only(d101.check(run), "D101")
    assert finding.saving_basis == "measured"
    loader = run.loaders[0]
    batches = loader.dataset_len / loader.batch_size
    # 20 ms saved of the 40 ms step, less the start-up (100 ms, 80 beyond a batch) over an epoch
    assert finding.saving == pytest.approx((0.020 - 0.080 / batches) / 0.040)
    loader.dataset_len = 2 * loader.batch_size  # a 2-batch epoch: the start-up eats the gain
    assert d101.check(run) == []
    assert "num_workers=3" in finding.fix and "num_workers=3" in finding.saving_how
    estimate = only(d101.check(data_bound_run()), "D101")
    # the estimate: the whole 30 ms wait hidden, less receiving each batch from a worker
    expected = (0.030 - d101.HANDOVER_BATCH_S) / 0.040
    assert estimate.saving_basis == "estimated" and estimate.saving == pytest.approx(expected)


def test_d210_uses_the_measured_fastest_implementation_or_stays_silent():
    run = optimizer_bound_run(0.014)  # 70% of the step; the constant says half of it goes
    timing = WhatIfTiming("optimizer.foreach", "optimizer step", 0.012, 0.009, 9, "foreach=True")
    run.whatif.timings = [timing]
    finding = only(d210.check(run), "D210")
    assert finding.saving_basis == "measured" and "foreach=True" in finding.fix
    # 12 ms of the step is the optimizer's own step; the phase's other 2 ms were the probes'
    # (at most the copy's time over it): a share of the 18 ms step without them
    # measured 17%: information below a quarter of the step (a batch-size finding keeps its place)
    assert finding.saving == pytest.approx(0.012 / 0.018 * 0.25) and finding.severity == "info"
    timing.alternative_s = 0.013  # no faster on this program: no claim
    assert d210.check(run) == []


def test_d210_is_decided_by_the_measured_step_not_by_a_share_line_near_the_observed_one():
    """On scripts with several problems the optimizer's share of the lengthened step sat near the
    10% line and D210 came and went between runs; measured, the fused step's time decides."""
    run = optimizer_bound_run(0.0005)  # 8% of the step: under the estimate's 10% line
    assert d210.check(run) == []  # not measured: no estimate for so small a phase
    timing = WhatIfTiming("optimizer.fused", "optimizer step", 0.0005, 0.0002, 9, "fused=True")
    run.whatif.timings = [timing]
    finding = only(d210.check(run), "D210")
    assert finding.saving_basis == "measured" and finding.severity == "info"
    timing.alternative_s = 0.00043  # 0.86x: within the rounds' noise of the loop's time
    assert d210.check(run) == []
    run = optimizer_bound_run(0.014)  # 70% of the step: the same margin applies
    run.whatif.timings = [timing]
    assert d210.check(run) == []


def test_d210_claims_only_the_optimizer_step_not_a_wrapper_around_it():
    """Lightning Fabric's PPO: a 16.9 ms optimizer phase whose Adam step, timed on a clone,
    took 0.42 ms as run and 0.11 ms fused: 0.3 ms can be saved, not 75% of the phase."""
    run = optimizer_bound_run(0.014)
    run.whatif.timings = [
        WhatIfTiming("optimizer.fused", "optimizer step", 0.0004, 0.0001, 15, "fused=True")
    ]
    finding = only(d210.check(run), "D210")
    assert finding.saving == pytest.approx(0.0003 / 0.020)


def test_d210_puts_a_cpu_time_measurement_on_the_steps_wall_clock():
    """At load 19 the clone's step took 5.6 ms of CPU time, while the program's optimizer phase
    took ~20 ms of wall time with the thread on a CPU a quarter of the time: read raw, the 5.6 ms
    capped the saving at 9% of the step where --try measured 48%."""
    run = optimizer_bound_run(0.014)  # 14 ms of a 20 ms step
    for step in run.steps:
        step.cpu_share = 0.25
    timing = WhatIfTiming("optimizer.fused", "optimizer step", 0.004, 0.001, 9, "fused=True")
    run.whatif.timings = [timing]
    assert only(d210.check(run), "D210").saving == pytest.approx(0.004 / 0.020 * 0.75)
    timing.clock = "cpu"  # 4 ms of CPU = 16 ms of wall at a 25% share, capped by the 14 ms phase
    assert only(d210.check(run), "D210").saving == pytest.approx(0.014 / 0.020 * 0.75)


def test_d210_caps_the_clones_step_by_the_phase_on_the_typical_steps_clock():
    """A profiled loop at load 12: the optimizer phase's median was 0.5 ms (an undisturbed
    step), 28% of the profile's 11.4 ms step; the clone's 0.46 ms CPU-time step at a 22% CPU
    share is 2.1 ms of the step's wall time. Capped by the phase's median, D210 said 2% where
    fused=True gained 7-24% on the program."""
    run = optimizer_bound_run(0.0005)
    for index, step in enumerate(run.steps):
        step.cpu_share = 0.25
        if index in (1, 4, 7):  # preempted in 3 of 8 steps: the phase's median is undisturbed
            step.phases["optimizer"] = 0.004
            step.wall_s += 0.0035
    timing = WhatIfTiming("optimizer.fused", "optimizer step", 0.0005, 0.00025, 9, "fused=True",
                          clock="cpu")  # fmt: skip
    run.whatif.timings = [timing]
    # the phase's part of the typical step: its profile share of it, 1.5 ms against the 0.5 ms
    # median; the clone's 0.5 ms of CPU is 2 ms of wall at a 25% share, so the part caps it
    phase_s = step_profile(run).share("optimizer") * typical_step_s(run)
    assert 0.0005 < phase_s < 0.002
    plain_s = step_without_probes_s(run)  # the seconds saved are a share of this step
    assert only(d210.check(run), "D210").saving == pytest.approx(phase_s / plain_s * 0.5)


def test_d210_states_its_seconds_as_a_share_of_the_step_without_the_probes_hooks():
    """Batch 2, a 0.9 ms diagnosed step: forward, backward and the optimizer step timed on
    copies took 0.6 ms of its 0.85 ms in those phases; the seconds fused=True saves were stated
    over the diagnosed step, half the share `--try fused_optimizer` gained on the program."""
    run = optimizer_bound_run(0.014)  # forward 2 ms, backward 4 ms, optimizer 14 ms
    run.whatif.timings = [
        WhatIfTiming("optimizer.fused", "optimizer step", 0.012, 0.009, 9, "fused=True"),
        WhatIfTiming("copy.forward_backward", "forward and backward", 0.003, 0.003, 9),
    ]
    finding = only(d210.check(run), "D210")  # 20 ms less 3 ms (forward, backward), 2 (step)
    assert finding.saving == pytest.approx(0.012 / 0.015 * 0.25)
    assert "15.0 ms step without torchdoctor's probes" in finding.saving_how
    for step in run.steps:  # two forwards and backwards a step: the excess may be the program's
        step.micro_batches = 2
    assert only(d210.check(run), "D210").saving == pytest.approx(0.012 / 0.018 * 0.25)
    run.whatif.timings[1].as_run_s = 0.0025  # a phase over twice its copy: the program's work
    for step in run.steps:
        step.micro_batches = 1
    assert only(d210.check(run), "D210").saving == pytest.approx(0.012 / 0.018 * 0.25)


def test_d220_estimate_counts_the_backwards_addition_into_the_zeros_not_only_the_fill():
    """The time inside zero_grad was 0.4-0.5x of what `--try set_to_none` gained on two planted
    scripts (20% stated against 35-45%): the backward also adds every new gradient into the
    zeros, a second pass over the same memory; never more than the fill and the backward hold."""
    run = optimizer_bound_run(0.014, set_to_none=False, zero_fill_s=0.001)  # 1 ms of a 20 ms step
    finding = only(d220.check(run), "D220")
    assert finding.saving_basis == "estimated" and finding.saving == pytest.approx(0.1)
    assert finding.severity == "info" and "5%" in evidence_text(finding)  # the fill's share
    for step in run.steps:  # a backward of 0.5 ms: the addition runs there
        step.phases["backward"] = 0.0005
        step.wall_s -= 0.0035
    assert only(d220.check(run), "D220").saving == pytest.approx(0.0015 / 0.0165)


def test_d210_and_d220_state_the_median_steps_seconds_over_the_input_waits_as_run():
    """d103_workers_respawned: a 3 ms median step, a 17.8 ms mean (each epoch's first batch
    waits 41 ms for the respawned workers): D210 stated 8% of the median step where `fused=True`
    gained -2..8%. A step's own work is shorter with the fix; the epoch's wait is not."""
    run = optimizer_bound_run(0.014, set_to_none=False, zero_fill_s=0.001)  # a 20 ms step
    fused, zero = only(d210.check(run), "D210").saving, only(d220.check(run), "D220").saving
    for step in run.steps[::4]:  # two epoch starts in 8 steps: 80 ms waits for a first batch
        step.phases["data"] += 0.08
        step.wall_s += 0.08
    weight = 0.020 / (0.020 + 2 * 0.08 / 8)
    assert only(d210.check(run), "D210").saving == pytest.approx(fused * weight)
    assert only(d220.check(run), "D220").saving == pytest.approx(zero * weight)
    run.loaders[0].num_workers = 0  # loaded in the training process: work, preempted alike
    assert only(d210.check(run), "D210").saving == pytest.approx(fused)


def test_d301_measured_autograd_cost_outranks_what_the_constant_under_ranked():
    run = good_cpu_run(steps=make_steps(forward=0.004, backward=0.006, optimizer=0.004))
    for step in run.steps:
        step.evaluation_s = 0.010  # evaluation: 10 ms beside each 14 ms step
    run.evaluation = EvaluationObservation(forwards=40, with_grad=40, seconds=0.080,
                                           forward_seconds=0.072)  # fmt: skip
    run.optimizers[0].foreach_or_fused = None
    run.whatif.timings = [
        WhatIfTiming("optimizer.fused", "optimizer step", 0.004, 0.001, 9, "fused=True")
    ]

    def first_of_the_two(findings):  # D304 (evaluation every step) may rank beside them
        return next(f for f in findings if f.id in ("D210", "D301"))

    # constant: autograd is 20% of an evaluation forward
    assert first_of_the_two(check_all(run)).id == "D210"
    run.whatif.timings.append(
        WhatIfTiming(
            "evaluation.inference_mode",
            "evaluation forward",
            0.002,
            0.0008,
            9,
            "model.eval() + torch.inference_mode()",
        )  # fmt: skip
    )
    top = first_of_the_two(check_all(run))
    assert top.id == "D301" and top.saving_basis == "measured"
    eval_share = 0.010 / 0.024
    assert top.saving == pytest.approx(eval_share * 0.9 * 0.6)
    assert d301.SAVING_OF == "run"


def test_step_savings_become_shares_of_the_run_with_seconds_per_epoch():
    run = optimizer_bound_run(0.014)
    for step in run.steps:
        step.evaluation_s = 0.020  # as long as the step: half the run is evaluation
    (finding,) = [f for f in check_all(run) if f.id == "D210"]
    assert finding.saving == pytest.approx(0.35 / 2)  # half of the step's 35%, of the run
    # 6400 samples / 64 per batch = 100 steps of 20 ms, plus 20 ms evaluation each
    assert finding.seconds_per_epoch == pytest.approx(finding.saving * 100 * 0.040)


# Compute what-ifs (whatif/precision.py, whatif/batch.py), as their timings would be recorded.
def forward_backward(name: str, as_run_s: float, fix_s: float, setting: str = "") -> WhatIfTiming:
    return WhatIfTiming(name, "forward and backward", as_run_s, fix_s, 9, setting)


def test_d201_measured_float32_gain_replaces_the_2x_constant_or_silences_it():
    run = good_cpu_run(precision=PrecisionObservation(forwards=8, float64_ops=24))
    estimate = only(d201.check(run), "D201")
    assert estimate.saving_basis == "estimated" and "assumes" in estimate.saving_how
    model_share = step_profile(run).share("forward", "backward")
    assert estimate.saving <= model_share
    run.whatif.timings = [forward_backward("precision.float32", 0.010, 0.008)]
    finding = only(d201.check(run), "D201")
    assert finding.saving_basis == "measured" and "0.80x" in finding.saving_how
    assert finding.saving == pytest.approx(model_share * 0.2)
    assert finding.saving < estimate.saving and "Measured:" in evidence_text(finding)
    # the optimizer step timed on float32 clones too: its share's gain is added
    run.whatif.timings.append(
        WhatIfTiming("precision.float32_optimizer", "optimizer step", 0.001, 0.0005, 9, "f32")
    )
    optimizer_share = step_profile(run).share("optimizer")
    with_optimizer = only(d201.check(run), "D201")
    assert with_optimizer.saving == pytest.approx(model_share * 0.2 + optimizer_share * 0.5)
    assert "the optimizer step" in with_optimizer.saving_how
    run.whatif.timings[0].alternative_s = 0.011  # float32 no faster on this program
    assert d201.check(run) == []


def test_d201_counts_the_evaluation_forwards_the_fix_makes_float32_too():
    """--try float32 makes the evaluation float32 as well: the stated saving is a share of the
    run, the training step's gain on the steps' share plus the evaluation forward's measured
    gain on the evaluation forwards' share (6% stated vs 33% tried where it did not)."""
    run = good_cpu_run(precision=PrecisionObservation(forwards=8, float64_ops=24))
    for step in run.steps:
        step.evaluation_s = step.wall_s  # half the run evaluates
    run.evaluation = EvaluationObservation(
        forwards=40, with_grad=40, seconds=0.5, forward_seconds=0.4
    )
    run.whatif.timings = [forward_backward("precision.float32", 0.010, 0.008)]
    model_share = step_profile(run).share("forward", "backward")
    training_only = only(d201.check(run), "D201")
    assert d201.SAVING_OF == "run" and training_only.saving_basis == "measured"
    assert "evaluation was not timed" in training_only.saving_how
    run.whatif.timings.append(
        WhatIfTiming("precision.float32_evaluation", "evaluation forward", 0.004, 0.001, 9, "f32")
    )
    finding = only(d201.check(run), "D201")
    assert finding.saving == pytest.approx(model_share * 0.2 * 0.5 + 0.5 * 0.8 * 0.75)
    assert "an evaluation forward" in finding.saving_how
    (ranked,) = [f for f in check_all(run) if f.id == "D201"]  # not scaled again to the run
    assert ranked.saving == pytest.approx(finding.saving)
    run.whatif.timings[0].alternative_s = 0.011  # the training batch no faster in float32:
    evaluation_only = only(d201.check(run), "D201")  # the 4x larger evaluation batch is
    assert evaluation_only.saving == pytest.approx(0.5 * 0.8 * 0.75)


def batch_timing(factor: int, per_sample_ratio: float) -> WhatIfTiming:
    return WhatIfTiming(f"batch.x{factor}", "forward and backward of 4 samples", 0.004,
                        0.004 * per_sample_ratio, 9, f"batch_size={4 * factor}",
                        batch_factor=factor)  # fmt: skip


def test_d202_measured_per_sample_gain_names_the_factor_and_counts_the_optimizer_once(tmp_path):
    run = overhead_run(ops=1000, tensors=40)  # batch 4; the estimate suggests 4x
    profile_share = {"fb": 0.009 / 0.0102, "optimizer": 0.001 / 0.0102}  # of the 10.2 ms step
    run.whatif.timings = [batch_timing(2, 0.55), batch_timing(4, 0.5)]
    finding = only(d202.check(run), "D202")
    # 4x gains little over 2x: the smaller change of the training is named
    two = profile_share["fb"] * 0.45 + profile_share["optimizer"] * 0.5
    assert finding.saving_basis == "measured" and finding.saving == pytest.approx(two)
    assert "batch_size=8" in finding.fix and "fewer steps per epoch" in finding.fix
    assert "lr=1.41421 * lr" in finding.fix and "per forward and backward of 4 samples" in (
        finding.saving_how
    )
    # --try batch_size runs the factor the finding names, read back from the trial's observation
    saved = tmp_path / "run.json"
    dump_run_observation(run, str(saved))
    assert factor_for(load_run_observation(str(saved))) == 2
    run.whatif.timings = [batch_timing(2, 0.9), batch_timing(4, 0.3)]
    assert "batch_size=16" in only(d202.check(run), "D202").fix
    assert factor_for(run) == 4
    # forward and backward time grows with the samples: the device is busy, whatever the
    # optimizer step's share a larger batch would spread
    run.whatif.timings = [batch_timing(2, 0.95), batch_timing(4, 0.92)]
    assert d202.check(run) == []


def test_d204_on_cpu_only_when_bf16_autocast_measured_clearly_faster():
    run = good_cpu_run(precision=PrecisionObservation(forwards=8, float32_ops=24))
    assert d204.check(run) == []  # a CPU is never flagged on the estimate
    model_share = step_profile(run).share("forward", "backward")
    slower = forward_backward("precision.autocast.bfloat16", 0.010, 0.017, "bf16")
    run.whatif.timings = [slower]  # a CPU without native bf16: 1.7x slower
    assert d204.check(run) == []
    slower.alternative_s = 0.0085  # 15% faster: not worth bf16 numerics
    assert d204.check(run) == []
    slower.alternative_s = 0.006  # AMX / AVX-512 BF16
    finding = only(d204.check(run), "D204")
    assert finding.saving_basis == "measured" and finding.saving == pytest.approx(model_share * 0.4)
    assert 'torch.autocast("cpu", dtype=torch.bfloat16)' in finding.fix
    # bf16 numerics on a CPU are the user's choice: information, ranked after any warning
    assert finding.severity == "info" and finding.changes_semantics
    problem = dataclasses.replace(
        finding, id="D999", severity="warning", saving=0.05, changes_semantics=False
    )
    assert [f.id for f in rank([finding, problem])] == ["D999", "D204"]


def test_d204_on_cuda_measured_fp16_replaces_the_tensor_core_estimate():
    run = fp32_h100_run(bf16_supported=False, device_name="Tesla V100", compute_capability=(7, 0))
    estimate = only(d204.check(run), "D204").saving
    run.whatif.timings = [forward_backward("precision.autocast.float16", 0.009, 0.006)]
    finding = only(d204.check(run), "D204")
    assert finding.saving_basis == "measured" and finding.saving < estimate
    assert finding.saving == pytest.approx(0.9 * (1 - 0.006 / 0.009))
    assert "torch.float16" in finding.fix and "GradScaler" in finding.fix
    run.whatif.timings[0].alternative_s = 0.0095
    assert d204.check(run) == []


@pytest.mark.parametrize(
    "rule, name, build",
    [
        (d205, "cuda.cudnn_benchmark", lambda: conv_h100_run()),
        (d206, "cuda.tf32", lambda: fp32_h100_run()),
        (d207, "cuda.channels_last", lambda: amp_conv_run(False)),
    ],
)
def test_cuda_setting_rules_state_the_measured_gain_or_stay_silent(rule, name, build):
    run = build()
    estimate = only(rule.check(run), rule.CODE)
    assert estimate.saving_basis == "estimated" and estimate.saving_how.startswith("assumes")
    model_share = step_profile(run).share("forward", "backward")
    run.whatif.timings = [forward_backward(name, 0.008, 0.006)]
    finding = only(rule.check(run), rule.CODE)
    assert finding.saving_basis == "measured" and "Measured:" in evidence_text(finding)
    assert finding.saving == pytest.approx(model_share * 0.25)
    run.whatif.timings[0].alternative_s = 0.0081  # no faster on this GPU and model
    assert rule.check(run) == []


def planned(run) -> list[str]:
    """The what-if probes the planner calls for on a recorded run (none is run here)."""
    from types import SimpleNamespace

    from torchdoctor.diagnose.whatif import _Plan

    plan = _Plan(SimpleNamespace(probes=[]), run)
    plan.build()
    return [label for _, label, _ in plan.items]


def test_planner_calls_for_the_cuda_probes_only_on_a_cuda_run_that_needs_them():
    conv = conv_h100_run()  # fp32 conv net: benchmark off, TF32 off, no autocast
    assert {"autocast", "cuDNN benchmark / TF32"} <= set(planned(conv))
    assert "channels_last" in planned(amp_conv_run(False))  # NCHW convs under autocast
    assert "channels_last" not in planned(amp_conv_run(True))
    tuned = conv_h100_run(cudnn_benchmark=True, tf32_matmul=True)
    assert "cuDNN benchmark / TF32" not in planned(tuned)
    cpu = planned(good_cpu_run())
    assert not {"cuDNN benchmark / TF32", "channels_last"} & set(cpu)
    float64 = planned(good_cpu_run(precision=PrecisionObservation(forwards=8, float64_ops=24)))
    assert "float32 instead of float64" in float64 and "autocast" not in float64


def test_planner_times_a_train_mode_evaluation_before_autocast_on_a_cpu(monkeypatch):
    """d302 (round 11): a 2.4 s run had 0.24 s of what-if budget; autocast, whose stake (the
    forward and backward) was larger, ran first and spent it, and D302 stated no saving where
    `--try inference_mode` gained 23%. On a CPU D204 is information ranked after the problems:
    its probe runs after theirs. The evaluation probe has a floor (its fewest forwards at the
    evaluation's observed time), which a short run's budget is raised to."""
    from torchdoctor.diagnose.whatif import precision

    monkeypatch.setattr(precision, "native_bf16_cpu", lambda: True)
    run = good_cpu_run()
    for step in run.steps:  # evaluation 23% of the run, forward and backward 68%
        step.evaluation_s = 0.004
    ev = run.evaluation
    ev.in_train_mode, ev.train_mode_sensitive, ev.forward_seconds = 4, True, 0.02
    order = planned(run)
    assert order.index("evaluation forward") < order.index("autocast"), order
    from types import SimpleNamespace

    from torchdoctor.diagnose.whatif import _Plan, _raised
    from torchdoctor.diagnose.whatif.guard import Budget

    plan = _Plan(SimpleNamespace(probes=[]), run)
    plan.build()
    floor = plan.floors["evaluation forward"]
    assert floor >= 2 * 3 * 0.005  # both sides' fewest rounds of a 5 ms forward at least
    assert _raised(plan, Budget(0.01), most_s=10.0) >= floor
    run.environment = h100_environment()  # on CUDA autocast keeps its stake
    assert planned(run).index("autocast") < planned(run).index("evaluation forward")


def test_a_probe_whose_fewest_rounds_cannot_fit_at_the_steps_times_is_not_begun():
    """yolov1-mini (6 s steps, forward and backward 97%): each probe's warm-up was paid before
    its rounds were refused, and the what-ifs ran 37.8 s against a 14 s budget. A probe's
    warm-up and fewest rounds, predicted from the steps' phases, must fit before it begins."""
    from types import SimpleNamespace

    from torchdoctor.diagnose.whatif import _Plan, _run_plan
    from torchdoctor.diagnose.whatif.guard import Budget

    def planned_and_run(forward_s: float) -> tuple[list[str], list[str]]:
        run = good_cpu_run(steps=make_steps(forward=forward_s, backward=2 * forward_s))
        run.environment.anomaly_detection = True
        plan = _Plan(SimpleNamespace(probes=[]), run)
        plan.build()
        begun: list[str] = []
        plan.items = [
            (stake, label, lambda allowance, label=label: begun.append(label) or [])
            for stake, label, _ in plan.items
        ]
        _run_plan(plan, Budget(5.0))
        return begun, run.whatif.skipped

    begun, skipped = planned_and_run(2.0)  # 6 s a step in forward and backward
    assert "anomaly detection" not in begun
    assert any(s.startswith("anomaly detection:") and "fewest rounds" in s for s in skipped)
    begun, skipped = planned_and_run(0.002)
    assert "anomaly detection" in begun and not skipped


def test_planner_replays_4x_the_batch_only_where_it_fits():
    run = overhead_run(ops=1000, tensors=40)  # overhead-bound at batch 4
    assert "larger batch" in planned(run)
    run.environment = h100_environment()
    run.memory.peak_bytes, run.memory.capacity_bytes = 60 * 2**30, 80 * 2**30
    assert "larger batch" not in planned(run)
    assert "75% of the GPU's memory" in run.whatif.skipped[0]
    run.memory.peak_bytes = 20 * 2**30
    assert "larger batch" in planned(run)


def test_d202_counts_the_loops_other_work_once_per_step_like_the_optimizer():
    run = overhead_run(ops=1000, tensors=40)
    for step in run.steps:  # 1 ms of zero_grad, loss and logging outside the phases
        step.phases["other"] = 0.001
        step.wall_s += 0.001
    run.whatif.timings = [batch_timing(4, 0.5)]
    profile = step_profile(run)
    per_step = profile.share("optimizer", "other") * (1 - 1 / 4)
    expected = profile.share("forward", "backward") * 0.5 + per_step
    assert only(d202.check(run), "D202").saving == pytest.approx(expected)


def test_d202_counts_the_loops_other_work_as_the_median_step_paid_it_not_its_spikes():
    """d103_workers_respawned: the loop's other work was 0.3-0.7 ms in steady steps, up to 5 ms
    in steps a worker process preempted or the old workers were joined in (2.3 ms mean): a larger
    batch pays those per epoch or at random, not once per step."""
    run = overhead_run(ops=1000, tensors=40)
    for index, step in enumerate(run.steps):
        other = 0.003 if index in (2, 5) else 0.0005  # two spikes of 8 steps, not outliers
        step.phases["other"] = other
        step.wall_s += other
    run.whatif.timings = [batch_timing(4, 0.5)]
    profile = step_profile(run)
    per_step = (profile.seconds("optimizer") + 0.0005) / profile.step_s * (1 - 1 / 4)
    expected = profile.share("forward", "backward") * 0.5 + per_step
    assert only(d202.check(run), "D202").saving == pytest.approx(expected)


def test_d202_states_the_typical_steps_seconds_over_the_steps_as_run_with_an_epoch_start():
    """d103_workers_respawned at idle: the epoch's first step waits for the respawned workers
    (41 ms against 3 ms steps), one step in four, left out of the profile as a rare outlier:
    D202 stated 44% of the typical step where `--try batch_size` gained 12%, and 8% in runs
    where one more slow step put the epoch starts back in. A larger batch pays the start once
    per epoch as now: the seconds saved are stated over the steps as they ran."""
    run = overhead_run(ops=1000, tensors=40)
    run.whatif.timings = [batch_timing(4, 0.5)]
    measured = only(d202.check(run), "D202").saving
    run.whatif.timings = []
    estimated = only(d202.check(run), "D202").saving
    start = run.steps[0]  # the epoch's first step: 100 ms waiting for the workers
    start.phases["data"] += 0.1
    start.wall_s += 0.1
    assert analyze(run).spread.left_out  # rare: the profile has the other steps only
    weight = 0.0102 / (sum(s.wall_s for s in run.steps) / len(run.steps))
    assert only(d202.check(run), "D202").saving == pytest.approx(estimated * weight)
    run.whatif.timings = [batch_timing(4, 0.5)]
    assert only(d202.check(run), "D202").saving == pytest.approx(measured * weight)


def test_d202_counts_a_batchs_hand_over_from_workers_that_keep_up_once_per_step():
    """d103_workers_respawned: steady steps wait 0.8 ms for batches the workers made at a
    fraction of the rest of the step: the hand-over (a queue read, shared memory mapped) is
    paid per batch, and with compute alone D202 stated 5-7% where `--try batch_size` gained
    12-16%. Workers that do not keep up make the wait the samples' cost: not divided."""
    run = overhead_run(ops=1000, tensors=40)
    run.whatif.timings = [batch_timing(4, 0.5)]
    compute_only = only(d202.check(run), "D202").saving
    for step in run.steps:  # 1 ms of waiting for each batch
        step.phases["data"] += 0.001
        step.wall_s += 0.001
    run.loaders = [good_loader(num_workers=2, persistent_workers=False, worker_cpu_s=0.002)]
    profile = step_profile(run)
    handover = 0.0012 / profile.step_s * (1 - 1 / 4)  # the wait and the 0.2 ms already there
    expected = compute_only * 0.0102 / profile.step_s + handover
    finding = only(d202.check(run), "D202")
    assert finding.saving == pytest.approx(expected) and "hand-over" in finding.saving_how
    run.loaders[0].worker_cpu_s = 0.030  # 15 ms of work a batch per worker: they make it wait
    finding = only(d202.check(run), "D202")
    assert finding.saving == pytest.approx(expected - handover)
    assert "hand-over" not in finding.saving_how


def test_d202_counts_the_optimizer_step_at_most_as_long_as_its_clone_took():
    """multi_respawn_adam: the optimizer phase as diagnosed was 2-3x the clone's step (the
    probes' work at the step's close), and D202 stated 52-53% where `--try batch_size` gained
    33-34%: the part a larger batch amortises is the optimizer's own step."""
    run = overhead_run(ops=1000, tensors=40)
    run.whatif.timings = [batch_timing(4, 0.5)]
    profile = step_profile(run)
    whole = only(d202.check(run), "D202").saving
    clone_s = profile.seconds("optimizer") / 4  # the clone's step: a quarter of the phase
    run.whatif.timings.append(
        WhatIfTiming(
            "optimizer.fused", "optimizer step", clone_s, clone_s / 2, 5, "fused=True", clock="wall"
        )  # fmt: skip
    )
    expected = profile.share("forward", "backward") * 0.5 + clone_s / profile.step_s * 0.75
    finding = only(d202.check(run), "D202")
    assert finding.saving == pytest.approx(expected) and finding.saving < whole
    run.optimizers.append(dataclasses.replace(run.optimizers[0]))  # two optimizers: the
    assert only(d202.check(run), "D202").saving == pytest.approx(whole)  # phase is not one's


def test_d202_beyond_trivial_ops_fires_only_on_a_clear_measured_gain():
    # 60 ops of 167 µs, 21x the 8 µs trivial op: no estimate, the batch what-if decides
    # 31x at 2% of the peak: not timed; at 0.4% (an idle device) the what-if decides
    assert "larger batch" not in planned(overhead_run(ops=40, tensors=40, utilization=0.02))
    assert "larger batch" in planned(overhead_run(ops=40, tensors=40))
    run = overhead_run(ops=60, tensors=40)
    assert d202.check(run) == [] and "larger batch" in planned(run)
    run.whatif.timings = [batch_timing(2, 0.8), batch_timing(4, 0.75)]
    assert d202.check(run) == []  # a per-sample gain noise could give: not called too small
    run.whatif.timings = [batch_timing(2, 0.6), batch_timing(4, 0.35)]
    finding = only(d202.check(run), "D202")
    assert finding.saving_basis == "measured" and "21x that" in evidence_text(finding)
    run.compute.utilization = None  # without a measured FLOP utilisation: not even timed
    assert d202.check(run) == [] and "larger batch" not in planned(run)


def test_d202_times_only_the_factors_whose_activations_fit():
    from torchdoctor.diagnose.whatif.batch import factors_that_fit

    run = overhead_run(ops=1000, tensors=40)
    memory = run.memory
    memory.peak_bytes, memory.capacity_bytes, memory.saved_activation_bytes = 50, 100, 10
    assert factors_that_fit(memory) == (2, 4)
    memory.saved_activation_bytes = 15  # 4x: 50 + 45 > 90
    assert factors_that_fit(memory) == (2,)
    memory.saved_activation_bytes = 45
    assert factors_that_fit(memory) == ()
    assert "larger batch" not in planned(run) and "would not fit" in run.whatif.skipped[-1]


def test_d202_estimate_never_exceeds_what_the_model_phases_give_back():
    run = overhead_run(ops=1000, tensors=40)
    run.compute.dispatch_overhead_s = 2e-5  # a floor of 20 ms: more than the 10.2 ms step
    finding = only(d202.check(run), "D202")
    model_share = step_profile(run).share("forward", "backward", "optimizer")
    assert finding.saving_basis == "estimated"
    assert finding.saving == pytest.approx(model_share * (1 - 1 / d202.BATCH_FACTOR))


def test_a_suggestion_that_changes_learning_never_ranks_above_a_warning():
    from torchdoctor.diagnose.findings import Finding, rank

    def finding(code, severity, saving, changes_semantics=False):
        return Finding(code, code, severity, saving, [], "", "", saving_basis="measured",
                       changes_semantics=changes_semantics)  # fmt: skip

    batch = finding("D202", "info", 0.6, changes_semantics=True)
    order = rank([finding("D210", "info", 0.1), batch, finding("D503", "warning", 0.05),
                  finding("D305", "error", 0.0), finding("D401", "info", 0.3)])  # fmt: skip
    # by saving, except that the suggestion goes below the warning (a problem, whatever its
    # saving), and so below the information that ranks above that warning
    assert [f.id for f in order] == ["D305", "D401", "D210", "D503", "D202"]
    assert [f.id for f in rank([batch, finding("D210", "info", 0.1)])] == ["D202", "D210"]


def test_d202_judges_the_batch_on_the_ops_it_sizes_not_the_optimizers():
    """A batch of 2 through 1024-wide layers with Adam's per-tensor loop (m02): the optimizer's
    ops are the parameters' size at any batch and made the mean op 35x the floor, so the batch
    was never timed and D210 alone was reported. The ops left after the optimizer's decide."""
    run = overhead_run(ops=40, tensors=40, utilization=0.02)  # 250 µs a op, 31x: not timed
    run.steps = make_steps(
        batch_size=2, data=0.0002, forward=0.0005, backward=0.001, optimizer=0.0085
    )
    assert "larger batch" not in planned(run)
    run.compute.optimizer_ops_per_step = 30  # 10 ops in 1.5 ms: 19x the floor
    assert "larger batch" in planned(run)


def test_d204_d211_d212_state_the_typical_steps_seconds_over_the_input_waits_as_run():
    """As D202, D210 and D220 (round 13): a rule whose fix shortens the step's own work (bf16
    autocast, anomaly mode off, the profiler off) states its share of the profile's typical
    step, which leaves a rare slow step out; an epoch's start-up wait for respawned workers is
    in the run's time and none of these fixes shortens it."""

    def with_fixes(run):
        run.environment.anomaly_detection = True
        run.habits.profiler_active_share = 1.0
        unit = "forward, backward and optimizer step"
        run.whatif.timings = [
            forward_backward("precision.autocast.bfloat16", 0.010, 0.006, "bf16"),
            forward_backward("anomaly.off", 0.010, 0.005),
            WhatIfTiming("profiler.off", unit, 0.010, 0.006, 24, "", pair_ratios=(0.55, 0.65)),
        ]
        return run

    def savings(run):
        return {f.id: f.saving for f in check_all(run) if f.id in ("D204", "D211", "D212")}

    as_typical = savings(with_fixes(good_cpu_run()))
    assert set(as_typical) == {"D204", "D211", "D212"}
    run = with_fixes(good_cpu_run())
    run.steps[0].phases["data"] += 0.08  # one epoch start in 8 steps: an 80 ms wait
    run.steps[0].wall_s += 0.08
    profile = step_profile(run)
    assert profile.step_s == pytest.approx(step_profile(with_fixes(good_cpu_run())).step_s)
    weight = profile.step_s / (profile.step_s + 0.08 / 8)
    for code, saving in savings(run).items():
        assert saving == pytest.approx(as_typical[code] * weight), code
    run.loaders[0].num_workers = 0  # loaded in the training process: work, preempted alike
    assert savings(run) == pytest.approx(as_typical)


def test_d211_counts_the_loss_computed_outside_the_model_at_the_copys_measured_gain():
    """d211: the copy's forward and backward ran 4.4x slower with anomaly mode on, 78% of the
    step: 60% stated, where `--try anomaly_off` gained 68%. The loss the loop computes outside
    the model (the "other" phase, 15% of that step) records a traceback per op too."""
    from torchdoctor.diagnose.rules import d211_anomaly_detection_on as d211

    run = good_cpu_run(
        steps=make_steps(forward=0.004, backward=0.004, optimizer=0.0005, other=0.0015)
    )
    run.environment.anomaly_detection = True
    run.whatif.timings = [forward_backward("anomaly.off", 0.010, 0.0025)]
    profile = step_profile(run)
    finding = only(d211.check(run), "D211")
    assert finding.saving_basis == "measured"
    assert finding.saving == pytest.approx(0.75 * profile.share("forward", "backward", "other"))
    assert "the loop's other ops counted alike" in evidence_text(finding)
