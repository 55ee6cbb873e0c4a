"""D103: DataLoader workers are started again at every epoch.

## What it does
Flags a `DataLoader` with worker processes and `persistent_workers=False` that was iterated more
than once, when starting its workers costs a measurable share (2% or more) of a training epoch.

## Why is this bad
Without `persistent_workers=True`, every `iter(loader)` (each epoch, each evaluation pass) shuts
the workers down and starts new ones: new processes, a fresh copy of the dataset in each, and an
empty prefetch queue. The training process waits for all of that before the first batch.

Estimated saving: the start-up overhead is the measured time to the first batch of each epoch
minus a steady-state batch wait. Per training epoch it is paid once per loader iteration; the
saving is that overhead over the epoch's time (batches per epoch times the mean step time) plus
the overhead.

## Example
```python
loader = DataLoader(dataset, batch_size=64, num_workers=4)
for epoch in range(epochs):
    for x, y in loader:
        ...
```

## Use instead
```python
loader = DataLoader(dataset, batch_size=64, num_workers=4, persistent_workers=True)
```

## Fix safety
Safe: batches and their order are unchanged (the sampler still reshuffles each epoch). The
workers stay alive, so their memory is held between epochs, and a dataset that changes between
epochs must do so through the sampler, not by mutating the dataset object in the main process.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import LoaderObservation, RunObservation
from torchdoctor.diagnose.rules._common import (
    clamp,
    median_phase_s,
    new_iterator_per_batch,
    pct,
    secs,
    severity_for,
    step_profile,
    training_loaders,
)

CODE = "D103"
TITLE = "DataLoader workers are re-spawned every epoch (persistent_workers=False)"
MIN_SAVING = 0.02


def _batches_per_epoch(loader: LoaderObservation) -> float:
    if loader.dataset_len and loader.batch_size:
        return max(1.0, loader.dataset_len / loader.batch_size)
    return max(1.0, loader.batches / max(loader.epochs_started, 1))


def check(run: RunObservation) -> list[Finding]:
    profile = step_profile(run)
    train = training_loaders(run)
    if profile is None or not train:
        return []
    train_loader = max(train, key=lambda ld: ld.batches)
    steady_wait_s = median_phase_s(run, "data")
    respawning = [
        ld
        for ld in run.loaders
        if ld.num_workers > 0
        and not ld.persistent_workers
        and ld.epochs_started >= 2
        and ld.worker_startup_s
        and not new_iterator_per_batch(ld)  # rule D107
    ]
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
    if not respawning:
        return []
    epoch_s = _batches_per_epoch(train_loader) * profile.step_s
    saving = clamp(overhead_per_epoch_s / (epoch_s + overhead_per_epoch_s))
    if saving < MIN_SAVING:
        return []
    evidence.append(
        f"Worker start-up costs {secs(overhead_per_epoch_s)} per training epoch of about "
        f"{secs(epoch_s)}: {pct(saving)} of the epoch."
    )
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity=severity_for(saving),
            saving=saving,
            evidence=evidence,
            fix="DataLoader(dataset, batch_size=..., num_workers=..., persistent_workers=True)",
            source="PyTorch DataLoader docs (persistent_workers); seed 001 (Mejora 2)",
            explanation="Each epoch starts new worker processes and waits for their first "
            "batch; persistent workers are started once.",
            details={
                "overhead_per_epoch_s": overhead_per_epoch_s,
                "epoch_s": epoch_s,
                "locations": [ld.location for ld in respawning],
            },
        )
    ]
