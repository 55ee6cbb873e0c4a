"""D102: the DataLoader's workers cannot keep up with the training step.

## What it does
Flags a training `DataLoader` that already uses worker processes but still makes each step wait
for data (10% or more of the steady-state step), when the machine has spare cores for more
workers. Loaders over in-memory tensors are left to rule D109 (workers cost more than they save
there), loaders already at one worker per spare core to rule D110, and loaders re-spawning
their workers every epoch to rule D103.

## Why is this bad
Each worker builds whole batches. When a batch takes longer to build than `num_workers` steps take
to run, the queue runs dry and the model waits for every batch.

Estimated saving: in steady state a data-bound loader delivers one batch per step, so each of its
`w` workers needs about `t_batch = w * t_step` per batch. With `W` workers the wait becomes
`max(0, t_batch / W - t_compute)`; the saving is the measured wait minus that. Median step
times are used, so the worker start-up at the beginning of an epoch (rule D103) does not count.

## Example
```python
loader = DataLoader(dataset, batch_size=256, num_workers=1)
```

## Use instead
```python
loader = DataLoader(dataset, batch_size=256, num_workers=8,
                    persistent_workers=True, prefetch_factor=4)
```

## Fix safety
Safe: batches and their order are unchanged. Each worker holds its own copy of the dataset
object, so memory grows with the number of workers.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import (
    clamp,
    cpu_count,
    loader_wait_with_workers,
    measured_steps,
    median,
    pct,
    secs,
    severity_for,
    suggested_workers,
    training_loaders,
)
from torchdoctor.diagnose.rules._loader_call import rewrite_call
from torchdoctor.diagnose.rules._loaders import in_memory, waiting_loader
from torchdoctor.diagnose.rules._respawn import respawns_each_epoch

CODE = "D102"
TITLE = "Too few DataLoader workers: steps wait for data"
MIN_DATA_SHARE = 0.10


def check(run: RunObservation) -> list[Finding]:
    step_s = median([s.wall_s for s in measured_steps(run)])
    # in-memory tensors: more workers add hand-over cost, not speed (rule D109)
    # a loader re-spawning its workers every epoch waits partly on start-up: rule D103 first
    loaders = [
        ld
        for ld in training_loaders(run)
        if ld.num_workers > 0 and not in_memory(run, ld) and not respawns_each_epoch(run, ld)
    ]
    if step_s <= 0 or not loaders:
        return []
    loader, data_s = waiting_loader(run, loaders)
    if data_s / step_s < MIN_DATA_SHARE:
        return []
    cpus = cpu_count(run, loader)
    workers = suggested_workers(cpus)
    if loader.num_workers >= workers:
        return []
    rest_s = step_s - data_s
    batch_s = loader.num_workers * step_s
    left_s = loader_wait_with_workers(batch_s, rest_s, workers)
    saving = clamp((data_s - left_s) / step_s)
    prefetch = max(loader.prefetch_factor or 2, 2)
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity=severity_for(saving),
            saving=saving,
            evidence=[
                f"Waiting for data took {pct(data_s / step_s)} of a typical step "
                f"({secs(data_s)} of {secs(step_s)}).",
                f"The DataLoader at {loader.location} has num_workers={loader.num_workers}; "
                f"the machine has {cpus} CPU core(s).",
                f"Each batch takes a worker about {secs(batch_s)} to build; with {workers} "
                f"workers the wait per step would drop to about {secs(left_s)}.",
            ],
            fix=rewrite_call(
                loader,
                {
                    "num_workers": str(workers),
                    "persistent_workers": "True",
                    "prefetch_factor": str(prefetch),
                },
            ),
            source="docs/techniques/data-loading.md; PyTorch docs: Performance Tuning Guide "
            "(asynchronous data loading)",
            explanation="The workers build batches more slowly than the model consumes them; "
            "more workers build more batches in parallel.",
            details={
                "num_workers": loader.num_workers,
                "suggested_workers": workers,
                "batch_build_s": batch_s,
                "wait_with_workers_s": left_s,
                "location": loader.location,
            },
        )
    ]
