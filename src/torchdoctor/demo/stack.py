"""The performance stack `torchdoctor demo` applies, one technique per row.

Each step is cumulative: row k runs with every change of rows 1..k. The CPU fixes are applied
in the order `torchdoctor diagnose` ranks their findings for seed 001's loop in this run
(`plan(..., ranking)`); without a diagnosis, in the default order: the optimizer step (D210),
the data-side cost removed at its source (float32 built once), the loop itself (inference_mode,
no per-step `.item()`), DataLoader workers. Rows before the loop change run seed 001's own loop
with the fixes applied to it, as a user would; from that row on, torchdoctor.Trainer. The
GPU-only steps follow. The batch-size step comes last although seed 001 takes it before the
GPU tuning: it is the one step that changes the optimisation, so every row above it compares
like with like.
Pure data, no torch: the plan for any device can be tested (and printed) on any machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from torchdoctor.techniques import finding_codes_for_demo_row

Dataset = Literal["per_item", "vectorised"]

# What every Trainer row starts from: seed 001's settings (batch 32, loading in the main
# process, fp32, no GPU tuning), so a row differs from the previous one by its own change only.
BASELINE_CONFIG: dict[str, Any] = {
    "batch_size": 32,
    "eval_batch_size": 32,
    "workers": 0,
    "pin_memory": False,
    "non_blocking": False,
    "precision": "fp32",
    "channels_last": False,
    "cudnn_benchmark": False,
    "tf32": False,
}
NAIVE_BATCH = 32
LARGE_BATCH = 256
LR_SCALE = LARGE_BATCH / NAIVE_BATCH  # linear scaling rule: lr x batch / 32


@dataclass(frozen=True)
class Step:
    key: str  # stable id, used in the JSON output
    name: str  # short, for the table
    label: str  # what this row adds, in full (JSON, docs)
    source: str  # where the technique comes from
    config: dict[str, Any] = field(default_factory=dict)  # TrainerConfig changes it adds
    dataset: Dataset | None = None  # switch to this data set form from this row on
    fused_optimizer: bool = False  # from this row on, the optimizer's multi-tensor step
    trainer_loop: bool = False  # from this row on, torchdoctor.Trainer instead of seed 001's loop
    lr_scale: float | None = None  # from this row on, the learning rate is multiplied by this
    # diagnose finding ids this step answers (from the technique registry): the CPU rows' order
    findings: tuple[str, ...] = ()
    changes_semantics: str | None = None  # why this row is not the same optimisation
    cuda_only: bool = False
    conv_only: bool = False  # only meaningful for models with convolutions


NAIVE = Step(
    key="naive",
    name="naive loop (seed 001)",
    label="naive loop (seed 001 as written)",
    source="seed 001",
    dataset="per_item",
)

STACK: tuple[Step, ...] = (
    Step(
        key="fused_optimizer",
        findings=finding_codes_for_demo_row("fused_optimizer"),
        name="+ fused optimizer step",
        label="+ fused (multi-tensor) optimizer step: fused=True "
        "(foreach=True on CPU, torch < 2.4)",
        source="torchdoctor diagnose D210",
        fused_optimizer=True,
    ),
    Step(
        key="vectorised",
        findings=finding_codes_for_demo_row("vectorised"),
        name="+ float32 built once",
        label="+ float32 tensors built once (from_numpy, vectorised) "
        "instead of per item in float64",
        source="seed 002 §8",
        dataset="vectorised",
    ),
    Step(
        key="trainer_loop",
        findings=finding_codes_for_demo_row("trainer_loop"),
        name="+ inference_mode, no .item() sync",
        label="+ torchdoctor.Trainer loop: inference_mode eval, no per-step .item() sync, "
        "zero_grad(set_to_none)",
        source="diagnose D303, D401; seed 000 §1.4, seed 004 §1",
        trainer_loop=True,
    ),
    Step(
        key="workers",
        findings=finding_codes_for_demo_row("workers"),
        name="+ DataLoader workers",
        label="+ DataLoader workers (persistent)",
        source="diagnose D101; seed 001 Mejora 2",
        config={"workers": "auto", "persistent_workers": True},
    ),
    Step(
        key="pinned",
        findings=finding_codes_for_demo_row("pinned"),
        name="+ pin_memory, non_blocking",
        label="+ pin_memory + non_blocking copies",
        source="seed 000 §1.1, seed 004 §2",
        config={"pin_memory": True, "non_blocking": True},
        cuda_only=True,
    ),
    Step(
        key="amp",
        findings=finding_codes_for_demo_row("amp"),
        name="+ AMP (bf16 / fp16)",
        label="+ mixed precision (autocast, bf16 or fp16 + GradScaler)",
        source="seed 000 §1.2, seed 003",
        config={"precision": "auto"},
        cuda_only=True,
    ),
    Step(
        key="channels_last",
        findings=finding_codes_for_demo_row("channels_last"),
        name="+ channels_last",
        label="+ channels_last memory format",
        source="docs/techniques",
        config={"channels_last": True},
        cuda_only=True,
        conv_only=True,
    ),
    Step(
        key="cudnn_benchmark",
        findings=finding_codes_for_demo_row("cudnn_benchmark"),
        name="+ cudnn.benchmark, TF32",
        label="+ cudnn.benchmark and TF32",
        source="seed 002 §10",
        config={"cudnn_benchmark": True, "tf32": True},
        cuda_only=True,
    ),
    Step(
        key="large_batch",
        findings=finding_codes_for_demo_row("large_batch"),
        name=f"+ batch {LARGE_BATCH}, lr x{LR_SCALE:g}",
        label=f"+ batch {LARGE_BATCH} with the learning rate scaled x{LR_SCALE:g} "
        f"(linear rule: lr x batch/{NAIVE_BATCH})",
        source="seed 001 Mejora 3",
        config={"batch_size": LARGE_BATCH, "eval_batch_size": LARGE_BATCH},
        lr_scale=LR_SCALE,
        changes_semantics=(
            f"batch size changes the optimisation: {LR_SCALE:g}x fewer steps per "
            f"epoch; lr scaled x{LR_SCALE:g} (linear rule, lr x batch/"
            f"{NAIVE_BATCH}), lr may need retuning"
        ),
    ),
)


def plan(device_type: str, model_has_conv: bool, ranking: Sequence[str] = ()) -> list[Step]:
    """The rows to run on this device, naive first. `ranking`: diagnose's finding ids, best
    first; the CPU fixes are applied in that order (a fix none of whose findings was raised
    keeps its default place after those that were). The GPU steps and the batch size follow."""
    steps = [NAIVE]
    for step in ranked(STACK, ranking):
        if step.cuda_only and device_type != "cuda":
            continue
        if step.conv_only and not model_has_conv:
            continue
        steps.append(step)
    return steps


def _follows_diagnosis(step: Step) -> bool:
    """CPU rows that keep the optimisation; the GPU rows and the batch size keep their place."""
    return bool(step.findings) and not step.cuda_only and step.changes_semantics is None


def ranked(stack: Sequence[Step], ranking: Sequence[str]) -> list[Step]:
    position = {finding: index for index, finding in reversed(list(enumerate(ranking)))}
    fixes = [step for step in stack if _follows_diagnosis(step)]

    def rank(step: Step) -> int:
        return min((position[f] for f in step.findings if f in position), default=len(ranking))

    return sorted(fixes, key=rank) + [step for step in stack if not _follows_diagnosis(step)]


def cumulative_config(steps: list[Step], upto: int) -> dict[str, Any]:
    """TrainerConfig fields for row `upto` (an index into `steps`): baseline + every change."""
    config = dict(BASELINE_CONFIG)
    for step in steps[1 : upto + 1]:
        config.update(step.config)
    return config


def uses_fused_optimizer(steps: list[Step], upto: int) -> bool:
    return any(step.fused_optimizer for step in steps[: upto + 1])


def uses_trainer(steps: list[Step], upto: int) -> bool:
    """False: the row runs seed 001's own loop (with the fixes so far applied to it)."""
    return any(step.trainer_loop for step in steps[: upto + 1])


def lr_scale(steps: list[Step], upto: int) -> float:
    scale = 1.0
    for step in steps[: upto + 1]:
        scale = step.lr_scale or scale
    return scale


def dataset_form(steps: list[Step], upto: int) -> Dataset:
    form: Dataset = "per_item"
    for step in steps[: upto + 1]:
        form = step.dataset or form
    return form
