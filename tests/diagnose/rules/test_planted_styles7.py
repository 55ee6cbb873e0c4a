"""The seventh set of planted scripts (styles.py PLANTED7) and round 8's RL miss, where the
decision rests on counts and structure, not timings: an RL loop's greedy evaluation episodes (in
train mode, without a loader, like its acting) told from its acting by the functions the program
runs them in; a running total kept in a metrics dict, whose graph spans the steps. Short runs (6
measured steps, no what-if timing); the full default-mode table, ranks included, is
`bench/planted_styles.py --set styles7`.
"""

from __future__ import annotations

import pytest
from planted import (
    assert_top_error_and_quiet_control,
    diagnose,
    diagnose_planted,
    line_of,
    one_thread,  # noqa: F401  (autouse fixture: one torch thread)
)
from rule_builders import line_profiled_run, only
from styles import PLANTED7

from torchdoctor.diagnose.observations import LineStat
from torchdoctor.diagnose.rules import d304_evaluation_too_frequent as d304


def rl_run(caller: str):
    """An RL loop whose every step is followed by 12 ms of no-grad train-mode forwards (a policy
    without Dropout or BatchNorm) on what an environment returned, no loader, sampled on a line of
    `rollout()` that `caller` called."""
    run = line_profiled_run()
    run.loaders = []
    for step in run.steps:
        step.evaluation_s = 0.012
    evaluation = run.evaluation
    evaluation.forwards = evaluation.under_no_grad = evaluation.in_train_mode = 400
    evaluation.under_inference_mode = 0
    evaluation.on_training_batches = 0
    evaluation.seconds = 0.012 * len(run.steps)
    run.lines.lines = [
        LineStat(
            "agent.py:40", "evaluation", samples=120, self_samples=120, share=0.3,
            self_share=0.3, function="rollout", code="logits = policy(torch.from_numpy(obs))",
            chain=[f"agent.py:71 in {caller}", "agent.py:90 in main"],
        ),
    ]  # fmt: skip
    return run


@pytest.mark.parametrize("caller", ["evaluate_policy", "run_validation", "evalGreedy", "test"])
def test_rl_greedy_evaluation_after_every_update_is_d304(caller):
    finding = only(d304.check(rl_run(caller)), "D304")
    assert finding.details["frequency"] == 1.0 and finding.saving_basis == "measured"


def test_a_metric_forward_on_the_training_batch_is_not_validation_by_its_name():
    run = rl_run("evaluate_batch")
    run.evaluation.on_training_batches = run.evaluation.forwards  # a second forward, D801's
    assert d304.check(run) == []


@pytest.mark.parametrize("caller", ["collect_rollouts", "select_action", "interval", "main"])
def test_rl_acting_in_train_mode_is_not_validation(caller):
    # acting forwards, or a name that only contains the letters ("interval", "retest" would too)
    assert d304.check(rl_run(caller)) == []


def test_a_running_total_in_a_metrics_dict_keeps_the_steps_graphs():
    # `metrics["loss"] += loss` in a hand-written progress-bar loop: the dict's entry is the
    # loop's variable whose graph grows by one step's loss each step
    script = "c07_own_progress_bar_metrics_dict_keeps_graph"
    report = diagnose_planted(PLANTED7, script)
    (graph,) = [r for r in report.run.memory.retained if r.kind == "graph"]
    assert 'metrics["loss"]' in graph.holder and graph.steps_alive >= 3
    line = line_of(f"styles7/{script}", 'metrics["loss"] += loss.detach() if FIXED')
    assert graph.location.endswith(f"{script}.py:{line}")
    assert "D503" in [f.id for f in report.findings]
    control = diagnose_planted(PLANTED7, script, "--fixed")
    assert not [r for r in control.run.memory.retained if r.kind == "graph"]


@pytest.mark.parametrize(
    "script",
    [
        "c10_wgan_n_critic_critic_grads_never_cleared",
        # the generator trains in eval mode while its discriminator trains in train mode in the
        # same step: judged model by model (round 8 excused the whole step)
        "c27_gan_samples_grid_generator_left_in_eval",
    ],
)
def test_correctness_problems_in_unseen_styles_are_errors(script):
    assert_top_error_and_quiet_control(PLANTED7, script)


def test_a_frozen_network_in_eval_mode_that_a_loss_runs_through_is_not_trained_in_eval_mode():
    # a perceptual loss: the gradient reaches the frozen network's output on its way to the
    # generator, but its weights never train (judged model by model, it must not be D305's)
    report = diagnose("clean_perceptual_loss_frozen_net", 6)
    assert report.run.habits.eval_mode_training_forwards == 0
    assert "D305" not in [f.id for f in report.findings]
