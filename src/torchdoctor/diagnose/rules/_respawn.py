"""Worker start-up paid again at every epoch (persistent_workers=False), measured per training
epoch. Shared by D103 (keep the workers: persistent_workers=True) and D109 (in-memory tensors:
drop the workers, which removes the start-up as well). Pure; no torch."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from torchdoctor.diagnose.findings import SavingBasis
from torchdoctor.diagnose.observations import LoaderObservation, RunObservation
from torchdoctor.diagnose.rules._common import (
    StepProfile,
    clamp,
    median,
    median_phase_s,
    new_iterator_per_batch,
    secs,
    step_profile,
    training_loaders,
)
from torchdoctor.diagnose.rules._measured import fastest, how


@dataclass(frozen=True)
class RespawnCost:
    loaders: list[LoaderObservation]
    overhead_per_epoch_s: float  # start-up the fix saves, per training epoch
    epoch_s: float  # a training epoch as run: its batches at the steady step, plus start-ups
    evidence: list[str]

    basis: SavingBasis = "estimated"  # "measured": the probe timed the fix's epoch start

    @property
    def share(self) -> float:
        """Share of an epoch as run (start-ups included) that persistent workers save."""
        return clamp(self.overhead_per_epoch_s / self.epoch_s) if self.epoch_s > 0 else 0.0


def _batches_per_epoch(loader: LoaderObservation) -> float:
    if loader.dataset_len and loader.batch_size:
        return max(1.0, loader.dataset_len / loader.batch_size)
    return max(1.0, loader.batches / max(loader.epochs_started, 1))


def _starts_workers_each_epoch(loader: LoaderObservation) -> bool:
    """Its workers start again for every epoch: not persistent, or a persistent loader built
    again for each epoch (each built one iterated about once). Several loaders built once at one
    line and each iterated again and again (a federated round's clients, h16's control: 8
    loaders, 48 epochs) keep their workers."""
    if not loader.persistent_workers:
        return True
    return 1 < loader.loaders_built and loader.epochs_started <= loader.loaders_built


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
        and _starts_workers_each_epoch(ld)
        and ld.epochs_started >= 2
        and ld.worker_startup_s
        and not new_iterator_per_batch(ld)  # rule D107
        and include(ld)
    ]
    if not respawning:
        return None
    measured = fastest(run, "data.persistent_workers")
    if measured is not None and measured.subject:  # the timing names the loader it was taken on
        timed = next((ld for ld in respawning if ld.location == measured.subject), None)
    else:  # the probe times the loader whose epoch starts took longest
        timed = max(respawning, key=lambda ld: sum(ld.worker_startup_s))
    if timed is None:
        measured = None  # taken on a loader this rule does not speak of
    overhead_per_epoch_s = startup_per_epoch_s = 0.0
    evidence = []
    for ld in respawning:
        startup_s = median(ld.worker_startup_s)  # the first epoch's may pay imports: a median
        overhead_s = max(0.0, startup_s - steady_wait_s)
        per_train_epoch = ld.epochs_started / max(train_loader.epochs_started, 1)
        evidence.append(
            f"The DataLoader at {ld.location} ({ld.role}) started {ld.num_workers} workers "
            f"{ld.epochs_started} times; the first batch took {secs(startup_s)} (median), "
            f"against {secs(steady_wait_s)} for a later one."
        )
        if measured is not None and ld is timed:
            # the side run's saving in units of its own epoch start, applied to what the
            # program's epoch starts took: the probe ran at another moment (another machine
            # load); the saving holds the workers' shut-down, which a first batch does not
            side_start_s = measured.startup_s or measured.as_run_s
            scale = startup_s / side_start_s if side_start_s > 0 else 0.0
            overhead_s = scale * max(0.0, measured.as_run_s - measured.alternative_s)
            startup_s = scale * measured.as_run_s  # the shut-down is part of the epoch as run
            evidence.append(f"Measured: {how(measured, 'an epoch start')}.")
        if ld.loaders_built > 1:
            evidence.append(
                f"It was built {ld.loaders_built} times at {ld.location}: build it once, before "
                "the epoch loop, so that persistent workers can be kept."
            )
        overhead_per_epoch_s += overhead_s * per_train_epoch
        startup_per_epoch_s += startup_s * per_train_epoch
    # an epoch as the program ran it: its batches at the steady step, plus the start-ups it paid
    epoch_s = _batches_per_epoch(train_loader) * _steady_step_s(run, profile) + startup_per_epoch_s
    basis: SavingBasis = "measured" if measured is not None else "estimated"
    return RespawnCost(respawning, overhead_per_epoch_s, epoch_s, evidence, basis)


def _steady_step_s(run: RunObservation, profile: StepProfile) -> float:
    """The mean training step with the steady (median) data wait in place of the mean one, which
    holds the epoch starts' worker start-ups: those are added per epoch, once."""
    return profile.step_s - profile.seconds("data") + median_phase_s(run, "data")


# Rule D103's threshold: start-up at or above this share of an epoch is worth a finding.
MIN_RESPAWN_SHARE = 0.02


def respawns_each_epoch(run: RunObservation, loader: LoaderObservation) -> bool:
    """The loader's workers are started again every epoch at a measurable cost: its data wait
    is partly start-up, so persistent workers (D103) or no workers (D109) come first, before
    advice on the worker count (D102, D110)."""
    cost = respawn_cost(run, lambda ld: ld is loader)
    return cost is not None and cost.share >= MIN_RESPAWN_SHARE
