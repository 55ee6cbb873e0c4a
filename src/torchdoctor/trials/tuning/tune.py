"""`tune(recipe, ...)`: batch-size search, worker sweep and stack ablation, as one TuneReport."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import torch

from torchdoctor.intercept.hooks import usable_cores
from torchdoctor.trainer import TrainerConfig
from torchdoctor.trials.tuning.ablation import (
    STAGES,
    Ablation,
    best_stages,
    plan_stages,
    run_ablation,
    stage_changes,
)
from torchdoctor.trials.tuning.batch_search import (
    AccumulationPlan,
    BatchSearchResult,
    find_max_batch,
    plan_accumulation,
)
from torchdoctor.trials.tuning.probe import RecipeProber
from torchdoctor.trials.tuning.workers_sweep import WorkerPoint, sweep_workers

TUNE_SCHEMA_VERSION = 1


@dataclass
class TuneOptions:
    steps: int = 8  # measured optimizer steps per probe (after warm-up)
    warmup: int = 2
    max_batch: int | None = None  # None: the training set's size
    margin: float = 0.9
    memory_cap: int | None = None  # synthetic activation-memory limit in bytes (testing)
    stages: tuple[str, ...] = STAGES
    search_batch: bool = True
    sweep: bool = True
    repeats: int = 3  # measurements of each configuration, interleaved


@dataclass
class TuneReport:
    recipe: str
    device: str
    batch: BatchSearchResult | None
    workers: list[WorkerPoint]
    best_workers: int
    ablation: Ablation
    chosen_stages: list[str]
    config: dict  # the TrainerConfig written by --write-config
    notes: list[str] = field(default_factory=list)
    schema_version: int = TUNE_SCHEMA_VERSION
    # the asked batch did not fit: a smaller micro-batch and more accumulation keep it
    accumulation: AccumulationPlan | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def tune(recipe, base: TrainerConfig, options: TuneOptions) -> TuneReport:
    device = "cuda" if _device(base) == "cuda" else "cpu"
    cores = usable_cores()
    prober = RecipeProber(
        recipe, base, options.warmup + options.steps, options.warmup, options.memory_cap
    )
    notes = []
    batch = None
    if options.search_batch:
        limit = options.max_batch or len(recipe.train_data)
        batch = find_max_batch(prober.fits, start=1, limit=limit, margin=options.margin)
        if not batch.memory_bound:
            notes.append(f"batch size {limit} (the search limit) still fits")
    asked = base.batch_size
    plan = _keep_global_batch(batch, base)
    if plan is not None:
        # the rest of the tuning runs what will be trained: the micro-batch that fits
        prober.base = base = base.replace(batch_size=plan.micro_batch, accumulate=plan.accumulate)
        notes.append(_plan_note(plan))
    points: list[WorkerPoint] = []
    best_workers = 0
    if options.sweep:
        points, best_workers = sweep_workers(
            prober, cores, pin_memory=device == "cuda", repeats=options.repeats
        )
    memory_bound = (
        batch is not None
        and batch.memory_bound
        and (batch.largest_fit is None or batch.largest_fit < asked)
    )
    stages = plan_stages(recipe.model, device, best_workers, memory_bound, options.stages)
    ablation = run_ablation(prober, stages, options.repeats)
    chosen = best_stages(ablation)
    notes.append(_why_chosen(ablation, chosen, base.batch_size))
    config = base.replace(**stage_changes(stages, chosen)).to_dict()
    return TuneReport(
        recipe.name, device, batch, points, best_workers, ablation, chosen, config, notes,
        accumulation=plan,
    )  # fmt: skip


def _keep_global_batch(
    batch: BatchSearchResult | None, base: TrainerConfig
) -> AccumulationPlan | None:
    """The asked micro-batch is above what fits with the margin: keep the global batch."""
    if batch is None or batch.recommended is None or base.batch_size <= batch.recommended:
        return None
    return plan_accumulation(base.batch_size * base.accumulate, batch.recommended)


def _plan_note(plan: AccumulationPlan) -> str:
    kept = (
        f"global batch {plan.global_batch} kept"
        if plan.effective_batch == plan.global_batch
        else f"global batch {plan.effective_batch} (asked {plan.global_batch}: no exact split)"
    )
    return (
        f"{kept}: micro-batch {plan.micro_batch} x {plan.accumulate} accumulation steps "
        "(written to the config; the rest of the tuning ran with it)"
    )


def _why_chosen(ablation: Ablation, chosen: list[str], batch_size: int) -> str:
    baseline = ablation.cumulative[0].result if ablation.cumulative else None
    if baseline is None or not baseline.ok:
        error = baseline.error if baseline is not None else "not run"
        return (
            f"no stack chosen: the baseline did not run at batch {batch_size} ({error}), so "
            "no speedup could be measured; lower batch_size (--config) and tune again"
        )
    if not chosen:
        return (
            "no stack chosen: no configuration beat the baseline beyond the noise (every "
            "repeat faster than every baseline repeat, and the median by more than 5%)"
        )
    return (
        f"stack chosen: {', '.join(chosen)} (the fastest configuration that beat the baseline "
        "in every repeat)"
    )


def _device(config: TrainerConfig) -> str:
    if config.device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return torch.device(config.device).type
