"""D112: batches of a few samples pass through DataLoader worker processes one at a time.

## What it does
Flags a training `DataLoader` with `num_workers > 0` and a batch of at most 16 samples (its
`batch_size`, or the samples a `batch_sampler`'s batches held) when
waiting for its batches takes 25% or more of a typical step. Datasets known to be in-memory
tensors are rule D109's; a loader whose workers restart every epoch is rule D103's first.

## Why is this bad
Every batch a worker builds is pickled, sent through a queue and unpickled in the training
process: a fixed cost per batch, whatever its size. With 4 samples per batch (the official CIFAR
tutorial's setting) that hand-over can cost more than building the batch, so the model waits on
inter-process traffic, and more workers do not help. When `__getitem__` only indexes data already
in memory, the workers cost more than they save even with larger batches.

Estimated saving: per sample, for a batch four times larger the hand-over is paid once for four
times the samples: `t_data * (1 - 1/4) / t_step`. An upper bound: it assumes the whole wait is
per-batch cost.

## Example
```python
loader = DataLoader(dataset, batch_size=4, shuffle=True, num_workers=2)
```

## Use instead
```python
# 4x the batch; scale the learning rate with it and re-check convergence
loader = DataLoader(dataset, batch_size=16, shuffle=True, num_workers=2)
# or, when dataset[i] only indexes data in memory (time it in this process): no workers
loader = DataLoader(dataset, batch_size=4, shuffle=True, num_workers=0)
```

## Fix safety
Changes semantics: a larger batch changes the optimisation (fewer, less noisy updates per epoch)
and usually needs a new learning rate; reported as information. Dropping the workers is safe (the
same batches in the same order) but only faster when `__getitem__` is cheap.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import LoaderObservation, RunObservation
from torchdoctor.diagnose.rules._common import (
    clamp,
    pct,
    secs,
    training_loaders,
    typical_step_s,
)
from torchdoctor.diagnose.rules._loader_call import rewrite_call
from torchdoctor.diagnose.rules._loaders import (
    samples_per_handover,
    small_batches_through_workers,
    waiting_loader,
)

CODE = "D112"
TITLE = "Tiny batches through DataLoader workers: the per-batch hand-over dominates"
MIN_DATA_SHARE = 0.25
BATCH_FACTOR = 4


def _fix(loader: LoaderObservation, batch: float) -> str:
    # torch refuses persistent_workers / prefetch_factor without workers: they go too
    in_process = rewrite_call(
        loader, {"num_workers": "0"}, drop=("persistent_workers", "prefetch_factor")
    )
    if loader.batch_size is not None:
        larger = f"loader = {rewrite_call(loader, {'batch_size': str(BATCH_FACTOR * loader.batch_size)})}"
    else:  # a batch_sampler makes the batches: its own size setting is the knob
        larger = (
            f"# your batch_sampler's batches held about {batch:.0f} sample(s): make them "
            f"{BATCH_FACTOR}x larger\nloader = {rewrite_call(loader, {})}"
        )
    return (
        "# the per-batch hand-over is paid once for 4x the samples; scale the learning rate\n"
        "# with the batch (linear rule for SGD, about 2x for Adam-type) and re-check convergence\n"
        f"{larger}\n"
        "# or, when dataset[i] only indexes data already in memory (time a few calls in this\n"
        "# process): the workers cost more than they save, drop them\n"
        f"loader = {in_process}"
    )


def check(run: RunObservation) -> list[Finding]:
    loaders = [ld for ld in training_loaders(run) if small_batches_through_workers(run, ld)]
    step_s = typical_step_s(run)
    if not loaders or step_s <= 0:
        return []
    loader, data_s = waiting_loader(run, loaders)
    share = clamp(data_s / step_s)
    if share < MIN_DATA_SHARE:
        return []
    saving = clamp(share * (1 - 1 / BATCH_FACTOR))
    batch = samples_per_handover(run, loader) or 1.0
    return [
        Finding(
            id=CODE,
            title=TITLE,
            # the batch size is a modelling choice: a suggestion, never a warning (as D202)
            severity="info",
            saving=saving,
            evidence=[
                f"Waiting for data took {pct(share)} of a typical step "
                f"({secs(data_s)} of {secs(step_s)}).",
                f"The DataLoader at {loader.location} passes batches of {batch:.0f} "
                f"sample(s) from {loader.num_workers} worker process(es): "
                f"{secs(data_s / batch)} of waiting per sample, each batch pickled "
                "and sent between processes.",
            ],
            fix=_fix(loader, batch),
            source="docs/techniques/batch-size.md; PyTorch docs: torch.utils.data (multi-process "
            "data loading)",
            explanation="Worker processes pay a fixed hand-over per batch; with a few samples "
            "per batch it outweighs the work, so batch more per hand-over or load in-process.",
            changes_semantics=True,
            details={
                "data_s": data_s,
                "step_s": step_s,
                "batch_size": batch,
                "num_workers": loader.num_workers,
                "location": loader.location,
            },
        )
    ]
