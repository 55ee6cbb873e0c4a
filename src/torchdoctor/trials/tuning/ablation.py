"""Ablation of the performance stack in the seeds' order (seed 004): pin_memory + non_blocking
(+ the swept workers) -> AMP -> channels_last -> torch.compile -> activation checkpointing (only
when memory-bound). Stages that do not apply here are marked with the reason, never faked.

Each stage is a set of TrainerConfig changes. Cumulative rows add the stages one by one;
leave-one-out rows drop one stage from the full stack. Every row trains a fresh copy of the same
initial model for the same number of steps, then evaluates it (accuracy after a fixed budget).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field

import torch
from torch import nn

from torchdoctor.trials.fixes._common import cpu_bf16_supported, has_conv
from torchdoctor.trials.tuning.probe import ProbeResult, RecipeProber
from torchdoctor.trials.tuning.repeated import beats, config_key, measure, spread

STAGES = ("data", "amp", "channels_last", "compile", "checkpointing")


@dataclass
class Stage:
    name: str
    changes: dict  # TrainerConfig fields
    skipped: str | None = None  # why it does not apply here


@dataclass
class AblationRow:
    label: str  # "baseline", "+amp", "all - compile", ...
    stages: list[str]
    result: ProbeResult  # samples_per_s: the median of the repeats
    speedup: float | None = None  # median samples/s over the baseline's median
    rates: list[float] = field(default_factory=list)  # samples/s of each repeat
    # (slowest, fastest) repeat as a speedup over the baseline's median: the noise to judge by
    spread: tuple[float, float] | None = None


@dataclass
class Ablation:
    stages: list[Stage]
    cumulative: list[AblationRow] = field(default_factory=list)
    leave_one_out: list[AblationRow] = field(default_factory=list)


BASELINE = dict(
    workers=0,
    pin_memory=False,
    non_blocking=False,
    precision="fp32",
    channels_last=False,
    compile=False,
    activation_checkpointing=[],
    cudnn_benchmark=False,
    tf32=False,
)


def plan_stages(
    model: nn.Module,
    device: str,
    workers: int,
    memory_bound: bool,
    wanted: tuple[str, ...] = STAGES,
) -> list[Stage]:
    cuda = device == "cuda"
    stages = [
        Stage(
            "data",
            dict(
                workers=workers, pin_memory=cuda, non_blocking=cuda, cudnn_benchmark=cuda, tf32=cuda
            ),
            None
            if workers or cuda
            else "no GPU, and the sweep found no gain from workers (or did not run)",
        ),
        Stage(
            "amp",
            dict(precision=_amp_precision(cuda)),
            None if cuda or cpu_bf16_supported() else "this CPU has no bfloat16 kernels",
        ),
        Stage(
            "channels_last",
            dict(channels_last=True),
            None if has_conv(model) else "the model has no convolutions",
        ),
        Stage(
            "compile",
            dict(compile=True),
            None
            if cuda or shutil.which("g++") or shutil.which("clang++")
            else "torch.compile on CPU needs a C++ compiler",
        ),
        Stage(
            "checkpointing",
            dict(activation_checkpointing=_checkpoint_targets(model)),
            None if memory_bound else "not memory-bound (the batch fits with room to spare)",
        ),
    ]
    for stage in stages:
        if stage.name not in wanted:
            stage.skipped = "not requested (--stages)"
        if stage.name == "checkpointing" and not stage.changes["activation_checkpointing"]:
            stage.skipped = stage.skipped or "no submodule to checkpoint"
    return stages


def _amp_precision(cuda: bool) -> str:
    if cuda:
        return "bf16" if torch.cuda.is_bf16_supported() else "fp16"
    return "bf16"


def _checkpoint_targets(model: nn.Module) -> list[str]:
    """Top-level children that hold parameters: the coarsest blocks to recompute."""
    return [name for name, child in model.named_children() if any(True for _ in child.parameters())]


def run_ablation(prober: RecipeProber, stages: list[Stage], repeats: int = 3) -> Ablation:
    """Baseline, cumulative and leave-one-out rows; each distinct configuration measured
    `repeats` times, interleaved, once however many rows show it (with two stages "+a, +b" is
    "all - ..." too: one measurement, not two that disagree)."""
    active = [s for s in stages if s.skipped is None]
    ablation = Ablation(stages)
    plan: list[tuple[str, list[str]]] = [("baseline", [])]
    plan += [
        (f"+{stage.name}", [s.name for s in active[: i + 1]]) for i, stage in enumerate(active)
    ]
    loo = [(f"all - {st.name}", [s.name for s in active if s is not st]) for st in active]
    if len(active) > 1:
        plan += loo
    configs = {
        config_key(stage_changes(stages, names)): stage_changes(stages, names) for _, names in plan
    }
    measured = measure(
        configs, lambda changes, evaluate: prober.run(evaluate=evaluate, **changes), repeats
    )
    for index, (label, names) in enumerate(plan):
        found = measured[config_key(stage_changes(stages, names))]
        row = AblationRow(label, names, found.result, rates=list(found.rates))
        (ablation.cumulative if index <= len(active) else ablation.leave_one_out).append(row)
    baseline = ablation.cumulative[0]
    base_rate = baseline.result.samples_per_s
    for row in ablation.cumulative + ablation.leave_one_out:
        rate = row.result.samples_per_s
        row.speedup = rate / base_rate if rate and base_rate else None
        row.spread = spread(row.rates, baseline.rates)
    return ablation


def best_stages(ablation: Ablation, margin: float = 1.05) -> list[str]:
    """The stages of the fastest configuration that beats the baseline beyond the noise (all its
    repeats faster than all the baseline's, and its median by `margin`), or none: a stack that
    is slower than doing nothing, or not surely faster, is never recommended."""
    baseline = ablation.cumulative[0] if ablation.cumulative else None
    candidates = [
        row
        for row in ablation.cumulative[1:] + ablation.leave_one_out
        if row.speedup
        and row.speedup >= margin
        and (baseline is None or not row.rates or beats(row.rates, baseline.rates, margin))
    ]
    best = max(candidates, key=lambda row: row.speedup or 0.0, default=None)
    return [] if best is None else list(best.stages)


def stage_changes(stages: list[Stage], names: list[str]) -> dict:
    changes = dict(BASELINE)
    for stage in stages:
        if stage.name in names and stage.skipped is None:
            changes.update(stage.changes)
    return changes
