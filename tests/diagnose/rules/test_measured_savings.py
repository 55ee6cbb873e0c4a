"""Rules read the what-if probes' measurements (run.whatif): a measured saving replaces the rule's
constant, is labelled "measured", and changes the ranking where the constant was wrong."""

from __future__ import annotations

import pytest
from rule_builders import good_cpu_run, make_steps, only
from test_compute_rules import optimizer_bound_run
from test_data_rules import data_bound_run

from torchdoctor.diagnose.observations import EvaluationObservation, WhatIfTiming
from torchdoctor.diagnose.rules import (
    d101_dataloader_main_process as d101,
)
from torchdoctor.diagnose.rules import (
    d210_optimizer_not_fused as d210,
)
from torchdoctor.diagnose.rules import (
    d301_eval_with_autograd as d301,
)
from torchdoctor.diagnose.rules_runner import check_all


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
    assert finding.saving == pytest.approx(0.020 / 0.040)  # 20 ms saved of the 40 ms step
    assert "num_workers=3" in finding.fix and "num_workers=3" in finding.saving_how
    estimate = only(d101.check(data_bound_run()), "D101")
    assert estimate.saving_basis == "estimated" and estimate.saving == pytest.approx(0.75)


def test_d210_uses_the_measured_fastest_implementation_or_stays_silent():
    run = optimizer_bound_run(0.014)  # 70% of the step; the constant says half of it goes
    timing = WhatIfTiming("optimizer.foreach", "optimizer step", 0.012, 0.009, 9, "foreach=True")
    run.whatif.timings = [timing]
    finding = only(d210.check(run), "D210")
    assert finding.saving_basis == "measured" and "foreach=True" in finding.fix
    # 12 ms of the 20 ms step is the optimizer's own step (the phase's 14 ms less the rest)
    assert finding.saving == pytest.approx(0.6 * 0.25) and finding.severity == "info"
    timing.alternative_s = 0.013  # no faster on this program: no claim
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
