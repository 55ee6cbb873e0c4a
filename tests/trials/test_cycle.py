"""Trials time whole cycles of the program's loop (trials/cycle.py), so that evaluation and epoch
boundaries are in their numbers as they are in the diagnosis's savings."""

import os
from pathlib import Path

import pytest
import torch
from torch import nn

from torchdoctor.diagnose.findings import Finding, rank
from torchdoctor.diagnose.observations import LoaderObservation, RunObservation, StepObservation
from torchdoctor.intercept.hooks import Hooks
from torchdoctor.trials.cycle import CYCLE_BUDGET_S, cycle_steps, trial_window
from torchdoctor.trials.fixes import get_fix

SCRIPT = Path(__file__).parent / "scripts" / "epoch_evaluation.py"


def steps(count, wall_s=0.01, evaluated=()):
    return [
        StepObservation(i, wall_s, {}, evaluation_s=0.05 if i in evaluated else 0.0)
        for i in range(count)
    ]


def test_the_cycle_is_the_training_loaders_epoch_else_the_evaluation_period():
    loader = LoaderObservation("train.py:3", role="train", dataset_len=2048, batch_size=60)
    assert cycle_steps(RunObservation("t.py", loaders=[loader], steps=steps(5))) == 35
    every_third = RunObservation("t.py", steps=steps(12, evaluated=(2, 5, 8, 11)))
    assert cycle_steps(every_third) == 3
    assert cycle_steps(RunObservation("t.py", steps=steps(12))) is None


def test_the_window_is_rounded_up_to_whole_cycles_within_the_budget():
    run = RunObservation("t.py", steps=steps(12, evaluated=(2, 5, 8, 11)))
    window = trial_window(10, run)
    assert (window.steps, window.cycle_steps) == (12, 3) and "4 whole cycles" in window.note
    slow = RunObservation("t.py", steps=steps(12, wall_s=CYCLE_BUDGET_S / 4, evaluated=(2, 5)))
    assert trial_window(10, slow).steps == 10  # 12 steps of 7.5 s: not waited for
    assert trial_window(10, None).steps == 10
    loader = LoaderObservation("train.py:3", role="train", dataset_len=640, batch_size=64)
    uniform = RunObservation("t.py", loaders=[loader], steps=steps(12))
    assert trial_window(4, uniform).steps == 4  # no per-cycle work: any window is a cycle's
    loader.num_workers = 2  # workers started again each epoch
    assert trial_window(4, uniform).steps == 10


def finding(code, saving, basis):
    return Finding(code, code, "warning", saving, [], "", "", saving_basis=basis)


def test_a_measured_saving_outranks_an_estimate_of_similar_size_not_a_much_larger_one():
    order = rank([finding("D1", 0.25, "estimated"), finding("D2", 0.20, "measured")])
    assert [f.id for f in order] == ["D2", "D1"]
    order = rank([finding("D1", 0.40, "estimated"), finding("D2", 0.20, "measured")])
    assert [f.id for f in order] == ["D1", "D2"]


def test_the_window_of_a_real_diagnosis_spans_its_epoch_and_its_evaluation():
    """Eight steps an epoch, then an evaluation: ten requested steps become two whole epochs."""
    from torchdoctor.diagnose.api import diagnose_script

    diagnosis = diagnose_script(str(SCRIPT), steps=10, warmup=2, quiet=True, whatif=False)
    window = trial_window(10, diagnosis.run)
    assert (window.cycle_steps, window.steps) == (8, 16), window.note


def evaluate(model, inputs):
    return model(inputs)  # the evaluation line the diagnosis names


def test_inference_mode_finds_the_evaluation_lines_the_diagnosis_named_relative_to_its_cwd():
    """The diagnosis writes `scripts/eval.py:LINE` (relative), the running frame has the absolute
    path, and the hook chain's own frames (intercept/) are not the caller: autograd-on evaluation
    forwards from that line run under inference mode, the training forward does not."""
    modes = []
    model = nn.Linear(4, 2)
    model.register_forward_hook(lambda *_: modes.append(torch.is_inference_mode_enabled()))
    line = evaluate.__code__.co_firstlineno + 1
    run = RunObservation("t.py")
    run.evaluation.forwards = run.evaluation.with_grad = 1
    run.evaluation.locations = [f"{os.path.relpath(__file__)}:{line}"]
    hooks = Hooks(cpu_count=2, observation=run)
    get_fix("inference_mode").apply(hooks)
    hooks.install()
    try:
        evaluate(model, torch.randn(3, 4))
        model(torch.randn(3, 4)).sum().backward()
    finally:
        hooks.uninstall()
    assert modes == [True, False] and "inference_mode" in hooks.used


def test_auto_counts_the_step_phases_for_the_training_part_of_the_run_only():
    """Evaluation is half the run: the optimizer's 40% of a training step is 20% of the run."""
    from types import SimpleNamespace

    from torchdoctor.trials.auto import payback_share

    run = RunObservation("t.py", steps=steps(4, wall_s=0.05, evaluated=(0, 1, 2, 3)))
    diagnosis = SimpleNamespace(run=run, breakdown={"optimizer": 0.4, "forward": 0.6})
    assert payback_share("fused_optimizer", diagnosis) == pytest.approx(0.2)
    assert payback_share("inference_mode", diagnosis) == pytest.approx(0.5)
