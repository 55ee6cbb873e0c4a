"""`--try batch_size` (rule D202's fix): the training loader's batch times k, the learning rate
scaled with it, compared per sample, its losses at equal samples seen, never called "kept"."""

from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

from torchdoctor.diagnose.observations import LoaderObservation, RunObservation
from torchdoctor.diagnose.source_lines import short_path
from torchdoctor.intercept.hooks import Hooks
from torchdoctor.trials import semantics, stats
from torchdoctor.trials.api import _suggestions, run_trials
from torchdoctor.trials.fixes import fixes_for_findings, get_fix, parse_fix_names

SCRIPT = (
    Path(__file__).parents[1] / "diagnose" / "rules" / "scripts" / "d202_wide_mlp_batch_of_two.py"
)
DATA = TensorDataset(torch.randn(40, 3), torch.arange(40))


def installed(observation=None) -> Hooks:
    hooks = Hooks(cpu_count=2, observation=observation)
    get_fix("batch_size").apply(hooks)
    hooks.install()
    return hooks


def test_the_loader_batch_grows_and_each_optimizer_rate_follows_its_rule():
    weights = [torch.nn.Parameter(torch.randn(3))]
    hooks = installed()
    try:
        early = torch.optim.Adam(weights, lr=1e-3)  # built before the loader: scaled with it
        assert early.param_groups[0]["lr"] == 1e-3
        loader = DataLoader(DATA, batch_size=5, shuffle=True)
        sgd = torch.optim.SGD(weights, lr=0.1, momentum=0.9)
        scheduler = torch.optim.lr_scheduler.StepLR(sgd, step_size=1)
    finally:
        hooks.uninstall()
    assert loader.batch_size == 20 and "batch_size" in hooks.used
    assert early.param_groups[0]["lr"] == pytest.approx(2e-3)  # sqrt(4) for Adam
    assert sgd.param_groups[0]["lr"] == pytest.approx(0.4)  # linear for SGD
    assert scheduler.base_lrs == [pytest.approx(0.4)]  # the scheduler read the scaled rate


def test_nothing_changes_without_a_loader_batch_to_scale():
    weights = [torch.nn.Parameter(torch.randn(3))]
    hooks = installed()
    try:
        sgd = torch.optim.SGD(weights, lr=0.1)
        whole = DataLoader(DATA, batch_size=None)
    finally:
        hooks.uninstall()
    # a batch the program slices itself is not the fix's: the rate stays with it
    assert whole.batch_size is None and sgd.param_groups[0]["lr"] == 0.1
    assert "batch_size" not in hooks.used


def training_loader() -> DataLoader:
    return DataLoader(DATA, batch_size=4)  # the site the diagnosis saw training


def test_only_the_training_loaders_the_diagnosis_saw_are_scaled():
    run = RunObservation("train.py")
    hooks = installed(run)
    try:
        train, evaluation = training_loader(), DataLoader(DATA, batch_size=4)
    finally:
        hooks.uninstall()
    assert train.batch_size == evaluation.batch_size == 16  # no loader observed: all scaled
    line = training_loader.__code__.co_firstlineno + 1
    site = f"{short_path(__file__)}:{line}"
    run.loaders = [
        LoaderObservation(site, role="train", batch_size=4),
        LoaderObservation("elsewhere.py:1", role="eval", batch_size=4),
    ]
    hooks = installed(run)
    try:
        train, evaluation = training_loader(), DataLoader(DATA, batch_size=4)
    finally:
        hooks.uninstall()
    assert (train.batch_size, evaluation.batch_size) == (16, 4), site


def test_all_and_auto_never_pick_it_and_naming_it_is_a_fix_not_a_suggestion():
    class Finding:
        id, title, changes_semantics = "D202", "batch too small", True

    assert "batch_size" not in fixes_for_findings([Finding()], RunObservation("t.py"))
    assert parse_fix_names("batch_size") == (["batch_size"], [], False)
    diagnosis = SimpleNamespace(findings=[Finding()])
    (untried,) = _suggestions([], diagnosis, ["workers"])
    assert untried.name == "D202" and "--try batch_size" in untried.reason
    assert _suggestions([], diagnosis, ["batch_size"]) == []  # measured in the same report


def run(samples: list[int], losses: list[float], seconds: float = 0.01) -> dict:
    steps = [
        {"wall_s": seconds * n, "cpu_s": seconds * n, "samples": n, "loss": loss}
        for n, loss in zip(samples, losses, strict=True)
    ]
    return {"steps": steps}


def test_speed_is_compared_per_sample_and_losses_at_equal_samples_seen():
    base = run([2] * 8, [8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0])
    # 4x the samples a step, at 0.5x the time per sample
    bigger = run([8] * 2, [5.5, 1.5], seconds=0.005)
    assert stats.paired_speedups([base], [bigger], 0).median == pytest.approx(0.5)  # per step
    per_sample = stats.paired_speedups([base], [bigger], 0, per_sample=True)
    assert per_sample.median == pytest.approx(2.0)
    judged = semantics.judge_per_sample([base, base], [bigger])
    # step 0 of 8 samples beside the baseline's step 3, step 1 beside step 7
    assert judged.verdict == semantics.OPTIMISATION_CHANGED and judged.compared_steps == 2
    # |1.5 - 1| over the mean |loss| of the compared baseline steps, (5 + 1) / 2
    assert judged.max_deviation == pytest.approx(0.5 / 3.0)
    unknown = run([2, 2], [1.0, 1.0])
    for step in unknown["steps"]:
        step["samples"] = None  # not counted: no point lines up
    assert semantics.judge_per_sample([base], [unknown]).verdict == "unknown"


def test_the_planted_script_runs_with_a_four_times_larger_batch():
    report = run_trials(str(SCRIPT), [], "batch_size", steps=6, repeats=1, warmup=1)
    variant = {v.config.name: v for v in report.variants}["batch_size"]
    assert variant.config.status == "ok" and variant.per_sample, variant.config
    assert variant.semantics.verdict == semantics.OPTIMISATION_CHANGED, variant.semantics
    assert variant.semantics.compared_steps >= 1
    # one run: samples/s times seconds per step is its samples per step, 4 x the program's 2
    config = variant.config
    assert config.samples_per_s.median * config.step_s.median == pytest.approx(8)
