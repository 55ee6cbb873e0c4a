"""D107: a new DataLoader iterator, and new worker processes, for every batch.

## What it does
Flags a `DataLoader` with worker processes whose `iter()` was called for (nearly) every batch it
delivered (two batches or fewer per iterator, on a dataset with more), the pattern
`x, y = next(iter(loader))` inside the training loop.

## Why is this bad
Every `iter(loader)` starts `num_workers` new processes (unless `persistent_workers=True`), has
each of them prefetch `prefetch_factor` batches, takes one and throws the rest away. The step
waits for process start-up every time: typically a hundred milliseconds or more, for a batch that
takes a millisecond. (With `shuffle=True` it also draws each batch from a fresh permutation, so
an "epoch" no longer visits every sample once.)

Estimated saving: the measured time to the first batch of each iterator, per step, capped by the
data time, less the one start-up per epoch that a single iterator still pays.

## Example
```python
for step in range(num_steps):
    x, y = next(iter(loader))
    ...
```

## Use instead
```python
def forever(loader):
    while True:  # one iterator per epoch; workers start once per epoch
        yield from loader

batches = forever(loader)
for step in range(num_steps):
    x, y = next(batches)
    ...
```

## Fix safety
Safe: batches come from the same loader; with `shuffle=True` every epoch now visits each sample
exactly once, the usual semantics (the original drew each batch from a new permutation).
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import (
    clamp,
    new_iterator_per_batch,
    pct,
    secs,
    severity_for,
    step_profile,
)

CODE = "D107"
TITLE = "New DataLoader iterator for every batch (next(iter(loader)) in the loop)"


def check(run: RunObservation) -> list[Finding]:
    profile = step_profile(run)
    loaders = [
        ld
        for ld in run.loaders
        if ld.num_workers > 0 and ld.worker_startup_s and new_iterator_per_batch(ld)
    ]
    if profile is None or not loaders:
        return []
    loader = max(loaders, key=lambda ld: ld.batches)
    startup_s = sum(loader.worker_startup_s) / len(loader.worker_startup_s)
    per_epoch = (
        loader.dataset_len / loader.batch_size
        if loader.dataset_len and loader.batch_size
        else loader.batches
    )
    data_s = profile.seconds("data")
    saving = clamp(min(startup_s, data_s) * (1 - 1 / max(per_epoch, 1)) / profile.step_s)
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity=severity_for(saving),
            saving=saving,
            evidence=[
                f"iter() was called {loader.epochs_started} times on the DataLoader at "
                f"{loader.location} for {loader.batches} batches.",
                f"Each call started {loader.num_workers} worker process(es) and waited "
                f"{secs(startup_s)} for its first batch; waiting for data took "
                f"{pct(profile.share('data'))} of the {secs(profile.step_s)} step.",
            ],
            fix=(
                "def forever(loader):\n"
                "    while True:\n"
                "        yield from loader\n"
                "batches = forever(loader)  # once, before the loop\n"
                "x, y = next(batches)       # in the loop, instead of next(iter(loader))"
            ),
            source="docs/techniques/data-loading.md; PyTorch docs: torch.utils.data "
            "(multi-process data loading, persistent_workers)",
            explanation="Each iter(loader) starts new worker processes and discards their "
            "prefetched batches; one iterator per epoch starts them once.",
            details={
                "iterators": loader.epochs_started,
                "batches": loader.batches,
                "startup_s": startup_s,
                "location": loader.location,
            },
        )
    ]
