"""Worker start-up paid again at every epoch (persistent_workers=False), measured per training
epoch. Shared by D103 (keep the workers: persistent_workers=True) and D109 (in-memory tensors:
drop the workers, which removes the start-up as well). Pure; no torch."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from torchdoctor.diagnose.observations import LoaderObservation, RunObservation
from torchdoctor.diagnose.rules._common import (
    clamp,
    median_phase_s,
    new_iterator_per_batch,
    secs,
    step_profile,
    training_loaders,
)


@dataclass(frozen=True)
class RespawnCost:
    loaders: list[LoaderObservation]
    overhead_per_epoch_s: float  # start-up beyond a steady batch wait, per training epoch
    epoch_s: float  # batches per training epoch x the mean step
    evidence: list[str]

    @property
    def share(self) -> float:
        """Share of an epoch (start-up included) spent starting workers."""
        total = self.epoch_s + self.overhead_per_epoch_s
        return clamp(self.overhead_per_epoch_s / total) if total > 0 else 0.0


def _batches_per_epoch(loader: LoaderObservation) -> float:
    if loader.dataset_len and loader.batch_size:
        return max(1.0, loader.dataset_len / loader.batch_size)
    return max(1.0, loader.batches / max(loader.epochs_started, 1))


def respawn_cost(
    run: RunObservation, include: Callable[[LoaderObservation], bool]
) -> RespawnCost | None:
    """Start-up cost of the loaders `include` accepts that re-spawned workers, or None."""
    profile = step_profile(run)
    train = training_loaders(run)
    if profile is None or not train:
        return None
    train_loader = max(train, key=lambda ld: ld.batches)
    steady_wait_s = median_phase_s(run, "data")
    respawning = [
        ld
        for ld in run.loaders
        if ld.num_workers > 0
        and (not ld.persistent_workers or ld.loaders_built > 1)
        and ld.epochs_started >= 2
        and ld.worker_startup_s
        and not new_iterator_per_batch(ld)  # rule D107
        and include(ld)
    ]
    if not respawning:
        return None
    overhead_per_epoch_s = 0.0
    evidence = []
    for ld in respawning:
        startup_s = sum(ld.worker_startup_s) / len(ld.worker_startup_s)
        overhead_s = max(0.0, startup_s - steady_wait_s)
        per_train_epoch = ld.epochs_started / max(train_loader.epochs_started, 1)
        overhead_per_epoch_s += overhead_s * per_train_epoch
        evidence.append(
            f"The DataLoader at {ld.location} ({ld.role}) started {ld.num_workers} workers "
            f"{ld.epochs_started} times; the first batch took {secs(startup_s)} each time, "
            f"against {secs(steady_wait_s)} for a later one."
        )
        if ld.loaders_built > 1:
            evidence.append(
                f"It was built {ld.loaders_built} times at {ld.location}: build it once, before "
                "the epoch loop, so that persistent workers can be kept."
            )
    epoch_s = _batches_per_epoch(train_loader) * profile.step_s
    return RespawnCost(respawning, overhead_per_epoch_s, epoch_s, evidence)


# Rule D103's threshold: start-up at or above this share of an epoch is worth a finding.
MIN_RESPAWN_SHARE = 0.02


def respawns_each_epoch(run: RunObservation, loader: LoaderObservation) -> bool:
    """The loader's workers are started again every epoch at a measurable cost: its data wait
    is partly start-up, so persistent workers (D103) or no workers (D109) come first, before
    advice on the worker count (D102, D110)."""
    cost = respawn_cost(run, lambda ld: ld is loader)
    return cost is not None and cost.share >= MIN_RESPAWN_SHARE
