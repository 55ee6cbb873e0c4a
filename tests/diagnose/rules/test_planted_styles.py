"""Planted scripts written in styles unlike ours (styles.py: classes wrapping the loop, closures,
callbacks, a GAN, an RL loop, Lightning-like modules, helpers, CLI flags), diagnosed for real.

Each script plants one problem; with `--fixed` it is its own control. The planted code must be
found (an error-level finding for a correctness problem) and the control must get neither it
nor any other warning. Short runs (6 measured steps, no what-if timing) keep the module fast: the
full default-mode table, ranks included, is bench/planted_styles.py.
"""

from __future__ import annotations

import pytest
from planted import one_thread  # noqa: F401  (autouse fixture: one torch thread)
from styles import PLANTED, PLANTED2, PLANTED3

from torchdoctor.diagnose.api import diagnose_script

# Timing-based diagnoses: run after the rest of the suite, one at a time (tests/conftest.py).
pytestmark = [
    pytest.mark.timing,
    # s10 formats the loss tensor (requires_grad) into its log line, as programs do
    pytest.mark.filterwarnings("ignore:Converting a tensor with requires_grad"),
]

# s06 batches by slicing tensors (no DataLoader) and evaluates once per 30-step epoch: it is
# diagnosed in whole-cycle mode below
WHOLE_CYCLE = "s06_eval_mode_never_called"
# the second set's correctness problems that show within a few steps (two optimizers, one never
# cleared; accumulation that never clears; eval() in a wrapper's constructor)
ERRORS2 = [
    "t04_gan_discriminator_grads_never_cleared",
    "t21_accumulation_never_zeroed",
    "t18_frozen_backbone_wrapper_eval",
]
ERRORS = [p for p in PLANTED if p.kind == "error" and p.script != WHOLE_CYCLE] + [
    p for p in PLANTED2 if p.script in ERRORS2
]


def diagnose(script: str, *args: str, steps: int | None = 6):
    path = str(next(p.path for p in PLANTED + PLANTED2 + PLANTED3 if p.script == script))
    report = diagnose_script(path, args, steps=steps, warmup=3, whatif=False)
    assert report.run.status == "stopped", (report.run.status, report.run.error)
    return report


def found(report) -> list[tuple[str, str]]:
    return [(f.id, f.severity) for f in report.findings]


@pytest.mark.parametrize("planted", ERRORS, ids=[p.script for p in ERRORS])
def test_correctness_problem_is_an_error_and_its_control_is_quiet(planted):
    report = diagnose(planted.script)
    assert (planted.code, "error") in found(report), found(report)
    assert report.findings[0].severity == "error", found(report)
    control = diagnose(planted.script, "--fixed")
    assert [f for f in found(control) if f[1] != "info"] == [], found(control)


# speed problems the rules missed in these styles before (see docs/benchmarks.md, "Planted
# scripts in other styles"): found in a short run, and not on the control
MISSED_BEFORE = ["s07_loader_built_per_epoch", "s10_logging_every_step"]
SPEED = [p for p in PLANTED if p.script in MISSED_BEFORE]


@pytest.mark.parametrize("planted", SPEED, ids=[p.script for p in SPEED])
def test_speed_problem_missed_before_is_found_and_not_on_its_control(planted):
    report = diagnose(planted.script)
    codes = [f.id for f in report.findings]
    assert planted.code in codes[:3], found(report)
    finding = report.findings[codes.index(planted.code)]
    assert f"{planted.script}.py:" in " ".join(finding.evidence), finding.evidence
    control = diagnose(planted.script, "--fixed")
    assert planted.code not in [f.id for f in control.findings], found(control)


def test_whole_cycle_without_a_dataloader_waits_for_the_per_epoch_evaluation():
    # no DataLoader: no epoch length to wait for; the evaluation after the 30th step ends the
    # cycle (20 steps alone would stop before it and miss the train-mode evaluation)
    report = diagnose(WHOLE_CYCLE, steps=None)
    assert len(report.run.steps) > 20 and report.run.evaluation.forwards > 0
    assert any("an evaluation" in note for note in report.run.notes), report.run.notes
    assert (report.findings[0].id, report.findings[0].severity) == ("D302", "error")
    control = diagnose(WHOLE_CYCLE, "--fixed", steps=None)
    assert control.run.evaluation.forwards > 0
    assert [f for f in found(control) if f[1] != "info"] == [], found(control)


def test_an_attack_crafted_in_eval_mode_is_not_training_in_eval_mode():
    # FGSM: a gradient reaches the eval-mode forward's output, but the step trains in train mode
    report = diagnose("s27_adversarial_attack_in_eval_mode")
    assert "D305" not in [f.id for f in report.findings], found(report)
    assert report.run.habits.eval_mode_training_forwards == 0


def test_gradients_cleared_by_hand_are_cleared():
    # p.grad = None on every parameter and a hand-written update: no optimizer, no zero_grad
    report = diagnose("t25_manual_grad_none_clean")
    assert [f for f in found(report) if f[1] != "info"] == [], found(report)


def test_a_checkpoint_of_the_state_dict_is_a_save_not_a_model_copy():
    # torch.save(model.state_dict()) in a callback fired per step: the line calls state_dict but
    # copies nothing; D701 reports the saves, and neither D215 nor D801 (nor their callers'
    # lines: the dispatcher's `fn(state)`, the loop's `fire(...)`) repeats them
    report = diagnose("u03_callbacks_registry_checkpoint")
    codes = [f.id for f in report.findings]
    assert codes[0] == "D701", found(report)
    assert "D215" not in codes and "D801" not in codes, found(report)


def test_a_gan_generator_forward_detached_for_the_critic_is_not_a_validation_warning():
    # WGAN-GP: `gen(z).detach()` runs with autograd at the training batch size; that costs only
    # its time (an info finding at most), unlike a validation pass with autograd on
    report = diagnose("u15_clean_wgan_gp_double_backward")
    assert [f for f in found(report) if f[1] != "info"] == [], found(report)
