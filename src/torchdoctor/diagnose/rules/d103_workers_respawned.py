"""D103: DataLoader workers are started again at every epoch.

## What it does
Flags a `DataLoader` with worker processes and `persistent_workers=False` that was iterated more
than once, when starting its workers costs a measurable share (2% or more) of a training epoch.
A training loader over in-memory tensors is left to rule D109 (drop the workers altogether).

## Why is this bad
Without `persistent_workers=True`, every `iter(loader)` (each epoch, each evaluation pass) shuts
the workers down and starts new ones: new processes, a fresh copy of the dataset in each, and an
empty prefetch queue. The training process waits for all of that before the first batch.

Estimated saving: the start-up overhead is the measured time to the first batch of each epoch
(median over the epochs) minus a steady-state batch wait. Per training epoch it is paid once per
loader iteration; the saving is that overhead over the epoch as run (batches per epoch times the
step with a steady data wait, plus the epoch's start-ups).

Measured saving: after the run the what-if probe times, on a side DataLoader with the program's
dataset, batch size, collate and worker count, the first batch of a fresh iterator plus the
shut-down of its workers (as run) against the first batch of a reused persistent one, in
interleaved rounds; that saving per fresh start, applied to the program's own epoch starts,
replaces the estimate's overhead.

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
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import (
    pct,
    secs,
    severity_for,
    training_loaders,
)
from torchdoctor.diagnose.rules._loader_call import rewrite_call
from torchdoctor.diagnose.rules._loaders import in_memory
from torchdoctor.diagnose.rules._measured import not_measured
from torchdoctor.diagnose.rules._respawn import MIN_RESPAWN_SHARE, respawn_cost

CODE = "D103"
TITLE = "DataLoader workers are re-spawned every epoch (persistent_workers=False)"
MIN_SAVING = MIN_RESPAWN_SHARE


def check(run: RunObservation) -> list[Finding]:
    train = training_loaders(run)
    # a training loader over in-memory tensors should drop its workers altogether (rule D109)
    cost = respawn_cost(run, lambda ld: not (in_memory(run, ld) and ld in train))
    if cost is None or cost.share < MIN_SAVING:
        return []
    saving = cost.share
    overhead_per_epoch_s, epoch_s = cost.overhead_per_epoch_s, cost.epoch_s
    evidence = [
        *cost.evidence,
        (
            f"Persistent workers save {secs(overhead_per_epoch_s)} per training epoch of about "
            f"{secs(epoch_s)}: {pct(saving)} of the epoch."
        ),
    ]
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity=severity_for(saving),
            saving=saving,
            evidence=evidence,
            fix=rewrite_call(cost.loaders[0], {"persistent_workers": "True"}),
            source="docs/techniques/data-loading.md; PyTorch docs: torch.utils.data "
            "(persistent_workers)",
            explanation="Each epoch starts new worker processes and waits for their first "
            "batch; persistent workers are started once.",
            details={
                "overhead_per_epoch_s": overhead_per_epoch_s,
                "epoch_s": epoch_s,
                "locations": [ld.location for ld in cost.loaders],
            },
            saving_basis=cost.basis,
            saving_how=_how(run, cost.basis),
        )
    ]


def _how(run: RunObservation, basis: str) -> str:
    if basis == "measured":
        return (
            "the program's median epoch start x what a reused persistent iterator saved in a "
            "side run (start and shut-down) per fresh start, over an epoch as run"
        )
    why = not_measured(run, "worker start-up")
    return "first batch of an epoch minus a steady batch, over an epoch as run" + (
        f"; not measured: {why}" if why else ""
    )
