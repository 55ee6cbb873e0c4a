"""The fifth set of planted scripts (styles.py PLANTED5), diagnosed for real where the decision
rests on counts and autograd structure, not on timings: a GAN whose discriminator's backward
walks into a generator output that was not detached (its graph retained for the generator's
step), a distillation step that clears the teacher instead of the student, SWA's update_bn (train
mode on purpose), a Trainer attribute summing a differentiable metric. Short runs (6 measured
steps, no what-if timing); the full default-mode table, ranks included, is
`bench/planted_styles.py --set styles5`.
"""

from __future__ import annotations

from planted import diagnose_planted, found, one_thread  # noqa: F401  (autouse fixture: one torch thread)
from styles import PLANTED5

GAN = "x29_cgan_trainer_methods_fake_not_detached"
CLEAN_GAN = "y03_clean_gan_fake_detached_no_retain"


def diagnose(script: str, *args: str):
    return diagnose_planted(PLANTED5, script, *args)


def line_of(script: str, text: str) -> int:
    path = next(p.path for p in PLANTED5 if p.script == script)
    lines = path.read_text().splitlines()
    return next(number for number, line in enumerate(lines, 1) if text in line)


def test_a_backward_into_a_retained_graph_after_a_forward_is_d214_at_the_retaining_line():
    # D's loss on G's output, not detached, backward(retain_graph=True); G's step then runs D
    # again (a model forward) and its backward walks back into the retained generator graph
    report = diagnose(GAN)
    habits = report.run.habits
    assert habits.retained_backwards_per_step == 1, habits
    assert habits.retained_reused_after_forward_per_step == 1, habits
    d214 = next(f for f in report.findings if f.id == "D214")
    line = line_of(GAN, "loss.backward(retain_graph=not FIXED)")
    assert f"{GAN}.py:{line}" in d214.evidence[0] and "not detached" in d214.evidence[0]
    assert ".detach()" in d214.fix


def test_a_retained_graph_nothing_walks_again_is_not_d214():
    # retain_graph=True out of habit on a detached fake: the generator's backward after the next
    # forward shares no node with the retained graph (only the parameters' leaves)
    report = diagnose(CLEAN_GAN, "--retain")
    assert report.run.habits.retained_backwards_per_step == 0, report.run.habits
    assert "D214" not in [f.id for f in report.findings]


def test_a_module_zero_grad_clears_only_the_optimizers_holding_its_parameters():
    # distillation: `teacher.zero_grad()` where the student's optimizer should be cleared
    script = "x17_distillation_teacher_zero_grad_by_mistake"
    report = diagnose(script)
    (student,) = report.run.optimizers
    assert student.grads_carried_over >= 5, student  # every measured step after the first
    assert report.findings[0].id == "D221" and report.findings[0].severity == "error"
    control = diagnose(script, "--fixed")
    assert control.run.optimizers[0].grads_carried_over == 0
    assert "D221" not in [f.id for f in control.findings]


def test_swa_update_bn_forwards_are_not_evaluation_left_in_train_mode():
    # the control evaluates the averaged model in eval mode; torch's update_bn runs it in train
    # mode under no_grad on purpose (BatchNorm statistics for the averaged weights)
    report = diagnose("x19_swa_averaged_model_eval_in_train_mode", "--fixed")
    evaluation = report.run.evaluation
    assert evaluation.forwards > 0 and evaluation.in_train_mode == 0, evaluation
    assert "D302" not in [f.id for f in report.findings]


def test_a_trainer_attribute_summing_a_differentiable_metric_keeps_the_graphs():
    script = "x26_unet_running_dice_keeps_graph"
    report = diagnose(script)
    graphs = [r for r in report.run.memory.retained if r.kind == "graph"]
    assert graphs and "self.running_dice" in graphs[0].holder, report.run.memory.retained
    line = line_of(script, "self.running_dice += dice.detach() if FIXED")
    assert graphs[0].location.endswith(f"{script}.py:{line}"), graphs[0].location
    assert "D503" in [f.id for f in report.findings]


def test_a_model_called_many_times_per_backward_on_batches_is_not_a_loop_of_tiny_ops():
    # MAML's inner steps (12 forwards of a 20-row support/query set per meta-backward) and an
    # A2C rollout over 32 environments (16 forwards of 32 rows): each call runs the model's own
    # forward and backward ops; only a loop calling it on one sample at a time is D203's
    from torchdoctor.diagnose.rules._common import expected_ops
    from torchdoctor.diagnose.rules.d203_tiny_op_loop import forward_rows, forwards_per_backward

    for script, forwards, rows in (
        ("y04_clean_maml_create_graph", 12, 20),
        ("y05_clean_actor_critic_shared_trunk_one_backward", 16, 32),
    ):
        report = diagnose(script)
        run = report.run
        assert (forwards_per_backward(run), forward_rows(run)) == (forwards, rows), script
        # counted once per step, the model's ops were 3x what it explains: D203's line before
        assert run.compute.ops_per_step >= 3 * expected_ops(run), run.compute
        assert "D203" not in [f.id for f in report.findings], found(report)
    # REINFORCE on one observation vector per environment step (no batch dimension): one
    # sample per call, the loop D203 names, whatever the vector's length (8 here)
    from styles import PLANTED

    report = diagnose_planted(PLANTED, "s18_rl_item_per_env_step", "--fixed")
    assert forwards_per_backward(report.run) >= 8 and forward_rows(report.run) == 1


def test_sampling_an_action_from_the_policys_distribution_is_the_models_math_not_a_hot_line():
    # D801 said "y05...:31 takes 15% of every step: it runs the program's own code" for the
    # rollout's `action = dist.sample()` (the callees the line profile recorded there)
    from torchdoctor.diagnose.observations import LineStat
    from torchdoctor.diagnose.rules._lines import is_model_compute

    line = LineStat(
        "a2c.py:31",
        "other",
        samples=68,
        self_samples=68,
        code="action = dist.sample()",
        callees=[
            "torch.distributions.categorical.Categorical.sample",
            "torch.distributions.utils.lazy_property.__get__",
            "torch.nn.functional.softmax",
        ],
    )
    assert is_model_compute(line)
    assert not is_model_compute(LineStat("a2c.py:40", "other", callees=["numpy.corrcoef"]))
