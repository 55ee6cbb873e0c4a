"""The --try fixes for a debugging session's leftovers and the optimizer: each changes what it
names, in-process through the hook points, and keeps the loss trajectory on a real script."""

from pathlib import Path

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from torchdoctor.intercept.hooks import Hooks
from torchdoctor.trials.api import run_trials
from torchdoctor.trials.fixes import fixes_for_findings, get_fix

SCRIPT = Path(__file__).parent / "scripts" / "debug_leftovers.py"
NEW = ("anomaly_off", "profiler_off", "set_to_none", "fused_optimizer", "eval_mode")


def installed(*names):
    hooks = Hooks(cpu_count=2)
    for name in names:
        get_fix(name).apply(hooks)
    hooks.install()
    return hooks


def test_fused_optimizer_asks_for_the_fused_step_unless_the_script_chose():
    model = nn.Linear(4, 2)
    hooks = installed("fused_optimizer")
    try:
        adam = torch.optim.Adam(model.parameters(), lr=1e-3)
        chosen = torch.optim.SGD(model.parameters(), lr=0.1, foreach=False)
        rmsprop = torch.optim.RMSprop(model.parameters())  # no fused kernel: foreach
    finally:
        hooks.uninstall()
    assert adam.defaults["fused"] is True and chosen.defaults["foreach"] is False
    assert rmsprop.defaults["foreach"] is True and "fused_optimizer" in hooks.used
    assert torch.optim.Adam(model.parameters()).defaults["fused"] is None  # put back


@pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled")
def test_anomaly_off_keeps_anomaly_mode_off_through_both_switches():
    hooks = installed("anomaly_off")
    try:
        torch.autograd.set_detect_anomaly(True)
        switched = torch.is_anomaly_enabled()
        with torch.autograd.detect_anomaly():
            in_block = torch.is_anomaly_enabled()
    finally:
        hooks.uninstall()
    assert not switched and not in_block and "anomaly_off" in hooks.used


def test_profiler_off_hands_the_script_a_profiler_that_records_nothing(tmp_path):
    hooks = installed("profiler_off")
    try:
        with torch.profiler.profile(record_shapes=True) as profiler:
            nn.Linear(4, 2)(torch.randn(3, 4)).sum()
            profiler.step()
        table = str(profiler.key_averages().table(sort_by="cpu_time_total", row_limit=5))
        profiler.export_chrome_trace(str(tmp_path / "trace.json"))
    finally:
        hooks.uninstall()
    assert table == "" and (tmp_path / "trace.json").read_text() == '{"traceEvents": []}'
    assert torch.profiler.profile.__name__ == "profile"  # put back


def test_set_to_none_drops_gradients_instead_of_zero_filling_them():
    model = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.randn(3, 4)).sum().backward()
    hooks = installed("set_to_none")
    try:
        optimizer.zero_grad(set_to_none=False)
    finally:
        hooks.uninstall()
    assert all(p.grad is None for p in model.parameters()) and "set_to_none" in hooks.used


def test_persistent_workers_keeps_workers_of_loaders_that_have_some():
    data = TensorDataset(torch.randn(8, 2))
    hooks = installed("persistent_workers")
    try:
        with_workers = DataLoader(data, batch_size=2, num_workers=1)
        without = DataLoader(data, batch_size=2)
    finally:
        hooks.uninstall()
    assert with_workers.persistent_workers and not without.persistent_workers


def test_eval_mode_switches_the_model_to_eval_for_evaluation_forwards_only():
    seen = []
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    model.register_forward_hook(lambda module, args, out: seen.append(module.training))
    hooks = installed("eval_mode")
    try:
        model(torch.randn(2, 4)).sum().backward()
        with torch.no_grad():
            model(torch.randn(2, 4))
    finally:
        hooks.uninstall()
    assert seen == [True, False] and model.training and "eval_mode" in hooks.used


def test_the_diagnosis_findings_select_the_new_fixes():
    class Finding:
        def __init__(self, code):
            self.id, self.changes_semantics = code, False

    codes = ["D103", "D210", "D211", "D220", "D302"]  # D212 (profiler) joins with its rule
    chosen = fixes_for_findings([Finding(code) for code in codes], None)
    assert set(NEW) - {"profiler_off"} | {"persistent_workers"} <= set(chosen)


@pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled")
def test_the_fixes_that_touch_numerics_keep_the_loss_trajectory_of_a_real_script():
    """The optimizer's arithmetic, the gradients' reset and the model's mode around evaluation
    (the others only observe; the in-process tests above show they act). One repeat: the
    verdicts here are about results, not speed."""
    touching = ("set_to_none", "fused_optimizer", "eval_mode")
    report = run_trials(str(SCRIPT), [], ",".join(touching), steps=4, repeats=1, warmup=1)
    variants = {v.config.name: v for v in report.variants}
    for name in touching:
        variant = variants[name]
        assert variant.config.status == "ok", (name, variant.config)  # it acted: not "no effect"
        # eval_mode: validation no longer updates BatchNorm's running statistics, which the
        # train-mode training forwards do not read: every training step is kept
        assert variant.semantics.verdict == "kept", (name, variant.semantics)


def test_trial_progress_counts_every_run_and_stays_silent_off_a_terminal():
    from torchdoctor.trials.progress import trial_progress
    from torchdoctor.trials.runner import TrialPlan, run_order

    plan = TrialPlan(None, {"baseline": [], "a": ["a"], "b": ["b"], "all": ["a", "b"]}, 5, 1)
    assert run_order(plan) == ["baseline", "a", "b", "all", "baseline"]  # + a second baseline
    plan.repeats = 2
    assert run_order(plan) == ["baseline", "a", "b", "all", "all", "b", "a", "baseline"]
    with trial_progress(quiet=False) as progress:  # pytest's output is not a terminal
        assert progress is None


def test_auto_tries_only_what_the_measured_phases_can_pay_back():
    """A data-bound script (4 ms per sample, a tiny MLP): the model's phases are a few percent of
    the step, so compute fixes are set aside with the measured share; adding workers is kept."""
    from torchdoctor.diagnose.api import diagnose_script
    from torchdoctor.trials.auto import worth_trying

    script = Path(__file__).parent / "scripts" / "slow_data.py"
    diagnosis = diagnose_script(str(script), steps=4, warmup=2)
    kept, skipped = worth_trying(["workers", "autocast", "fused_optimizer"], diagnosis)
    assert kept == ["workers"], (diagnosis.breakdown, skipped)
    assert "forward + backward took" in skipped["autocast"]
    assert "optimizer took" in skipped["fused_optimizer"]
