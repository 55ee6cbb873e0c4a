"""The fix catalogue: names, the run-time interception of each fix, and pure applies_to()."""

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from torchdoctor.diagnose.observations import (
    LoaderObservation,
    ModuleObservation,
    OptimizerObservation,
    RunObservation,
)
from torchdoctor.errors import UsageError
from torchdoctor.intercept.hooks import Hooks
from torchdoctor.trials.fixes import FIX_NAMES, all_fixes, get_fix, parse_fix_names
from torchdoctor.trials.fixes._common import cpu_bf16_supported


def test_every_fix_module_follows_the_layout():
    for fix in all_fixes():
        assert fix.NAME in FIX_NAMES and fix.__doc__ and fix.SUMMARY and fix.PERMANENT
        # a fix compared per sample (a larger batch) keeps nothing step by step: tolerance 0
        per_sample = getattr(fix, "PER_SAMPLE", False)
        assert (
            fix.TOLERANCE == 0 if per_sample else 0 < fix.TOLERANCE < 1
        ) and fix.TOLERANCE_REASON
        assert callable(fix.applies_to) and callable(fix.apply)


def test_unknown_fix_is_a_usage_error_naming_the_known_ones():
    with pytest.raises(UsageError) as info:
        parse_fix_names("workers,turbo")
    assert info.value.exit_code == 2 and "turbo" in str(info.value) and "float32" in str(info.value)


def test_learning_changes_are_suggestions_and_fixes_keep_catalogue_order():
    fixes, suggestions, wants_all = parse_fix_names("float32, learning_rate,workers")
    assert fixes == ["workers", "float32"] and suggestions == ["learning_rate"] and not wants_all


def applied(*names):
    hooks = Hooks(cpu_count=2)
    for name in names:
        get_fix(name).apply(hooks)
    return hooks


def test_workers_rewrites_a_positional_dataloader_and_leaves_explicit_workers_alone():
    dataset = TensorDataset(torch.arange(8.0))
    hooks = applied("workers")
    hooks.install()
    try:
        plain = DataLoader(dataset, 4)
        explicit = DataLoader(dataset, batch_size=4, num_workers=1)
    finally:
        hooks.uninstall()
    assert (plain.num_workers, plain.persistent_workers, plain.prefetch_factor) == (2, True, 2)
    assert plain.batch_size == 4 and explicit.num_workers == 1 and "workers" in hooks.used
    assert DataLoader(dataset).num_workers == 0  # uninstalled: torch is back as it was


def test_float32_converts_a_double_model_in_place_and_the_optimizer_still_trains_it():
    model = nn.Linear(4, 2).double()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    before = model.weight.detach().clone()
    hooks = applied("float32")
    hooks.install()
    try:
        output = model(torch.randn(3, 4, dtype=torch.float64))
        output.sum().backward()
        optimizer.step()
    finally:
        hooks.uninstall()
    assert model.weight.dtype == torch.float32 and output.dtype == torch.float64
    assert not torch.equal(model.weight.detach(), before.float())  # the step reached the weights


@pytest.mark.skipif(not cpu_bf16_supported(), reason="no CPU bf16 kernels")
def test_autocast_runs_the_forward_in_bfloat16_and_returns_float32():
    seen = []
    model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
    model[0].register_forward_hook(lambda m, a, out: seen.append(out.dtype))
    hooks = applied("autocast")
    hooks.install()
    try:
        output = model(torch.randn(4, 8))
    finally:
        hooks.uninstall()
    assert seen == [torch.bfloat16] and output.dtype == torch.float32


def test_applies_to_reads_only_the_observation():
    run = RunObservation("train.py")
    run.loaders = [LoaderObservation("train.py:9", num_workers=0, cpu_count=2)]
    run.models = [ModuleObservation("Net", parameter_dtypes={"torch.float64": 100})]
    assert get_fix("workers").applies_to(run) and get_fix("float32").applies_to(run)
    assert not get_fix("pin_memory").applies_to(run)  # CPU run: nothing to pin for
    run.loaders[0].num_workers = 4
    run.models[0].parameter_dtypes = {"torch.float32": 100}
    assert not get_fix("workers").applies_to(run) and not get_fix("float32").applies_to(run)


def test_the_fused_optimizer_fix_applies_to_any_optimizer_accepting_foreach_or_fused():
    """RAdam has a foreach implementation and no fused one: D210 names it, so `--try` must offer
    the fix too (it read a list of four class names)."""
    run = RunObservation("train.py")
    run.optimizers = [OptimizerObservation("RAdam", implementations=("foreach",))]
    assert get_fix("fused_optimizer").applies_to(run)
    run.optimizers = [OptimizerObservation("LBFGS")]  # accepts neither
    assert not get_fix("fused_optimizer").applies_to(run)


def test_try_all_maps_findings_to_fixes_and_never_applies_learning_changes():
    from torchdoctor.diagnose.findings import Finding
    from torchdoctor.trials.fixes import fixes_for_findings

    def finding(code, changes_semantics=False):
        return Finding(
            code, "t", "warning", 0.1, [], "fix", "seed", changes_semantics=changes_semantics
        )

    run = RunObservation("train.py")  # CPU, nothing observed: only the findings decide
    chosen = fixes_for_findings([finding("D101"), finding("D201"), finding("D202", True)], run)
    assert chosen == ["workers", "float32"]


def test_grad_scaler_plumbing_steps_the_scripts_optimizer_once_through_the_scaler():
    # On a CPU-only machine the CUDA GradScaler disables itself (scale/unscale are identities),
    # which still exercises the plumbing: loss scaling at backward, clipping that unscales
    # first, scaler.step() re-entering optimizer.step() without recursing, one step per call.
    import warnings

    from torchdoctor.trials.fixes.autocast import _drive_grad_scaler

    hooks = Hooks()
    steps = []
    hooks.on_step.append(steps.append)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "GradScaler is enabled, but CUDA is not available"
        _drive_grad_scaler(hooks)
    hooks.install()
    try:
        model = nn.Linear(4, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        before = model.weight.detach().clone()
        model(torch.randn(8, 4)).pow(2).mean().backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
    finally:
        hooks.uninstall()
    assert steps == [optimizer] and not torch.equal(before, model.weight.detach())
    assert torch.nn.utils.clip_grad_norm_.__module__ == "torch.nn.utils.clip_grad"  # restored
