"""The demo's plan: which rows run on which device, and what each row's settings are."""

from __future__ import annotations

from torchdoctor.demo.stack import (
    BASELINE_CONFIG,
    LARGE_BATCH,
    cumulative_config,
    dataset_form,
    lr_scale,
    plan,
    uses_fused_optimizer,
    uses_trainer,
)
from torchdoctor.trainer.config import TrainerConfig


def keys(steps):
    return [step.key for step in steps]


def test_cpu_plan_has_no_gpu_rows():
    assert keys(plan("cpu", model_has_conv=True)) == [
        "naive",
        "fused_optimizer",
        "vectorised",
        "trainer_loop",
        "workers",
        "large_batch",
    ]


def test_cuda_plan_adds_gpu_rows_before_the_semantics_changing_one():
    assert keys(plan("cuda", model_has_conv=True)) == [
        "naive",
        "fused_optimizer",
        "vectorised",
        "trainer_loop",
        "workers",
        "pinned",
        "amp",
        "channels_last",
        "cudnn_benchmark",
        "large_batch",
    ]


def test_fixes_follow_the_diagnosis_ranking():
    # D101 ranked first: workers first; D210 then D401; nothing ranked the float32 fix: last
    ranking = ["D101", "D210", "D702", "D401"]
    assert keys(plan("cpu", model_has_conv=False, ranking=ranking)) == [
        "naive",
        "workers",
        "fused_optimizer",
        "trainer_loop",
        "vectorised",
        "large_batch",
    ]
    assert keys(plan("cuda", model_has_conv=True, ranking=["D303", "D106"]))[:5] == [
        "naive",
        "trainer_loop",
        "vectorised",
        "fused_optimizer",
        "workers",
    ]
    assert keys(plan("cuda", model_has_conv=True, ranking=["D303"]))[-1] == "large_batch"
    assert "channels_last" not in keys(plan("cuda", model_has_conv=False))


def test_only_the_batch_size_row_changes_semantics():
    steps = plan("cuda", model_has_conv=True)
    changing = [step.key for step in steps if step.changes_semantics]
    assert changing == ["large_batch"]
    assert "lr may need retuning" in steps[-1].changes_semantics


def test_rows_are_cumulative_and_valid_trainer_configs():
    steps = plan("cuda", model_has_conv=True)
    first = cumulative_config(steps, 1)
    assert first == BASELINE_CONFIG and first["batch_size"] == 32 and first["workers"] == 0
    workers = cumulative_config(steps, keys(steps).index("workers"))
    assert workers["workers"] == "auto" and workers["persistent_workers"] is True
    amp = cumulative_config(steps, keys(steps).index("amp"))
    assert amp["precision"] == "auto" and amp["pin_memory"] is True and amp["workers"] == "auto"
    last = cumulative_config(steps, len(steps) - 1)
    assert last["batch_size"] == LARGE_BATCH and last["channels_last"] is True
    for index in range(1, len(steps)):
        TrainerConfig(**cumulative_config(steps, index))  # every field exists


def test_dataset_form_loop_and_lr_switch_once():
    steps = plan("cpu", model_has_conv=False)
    forms = [dataset_form(steps, index) for index in range(len(steps))]
    assert forms == ["per_item", "per_item", "vectorised", "vectorised", "vectorised", "vectorised"]
    fused = [uses_fused_optimizer(steps, index) for index in range(len(steps))]
    assert fused == [False, True, True, True, True, True]
    trainer = [uses_trainer(steps, index) for index in range(len(steps))]
    assert trainer == [False, False, False, True, True, True]
    assert [lr_scale(steps, index) for index in range(len(steps))] == [1, 1, 1, 1, 1, 8]
