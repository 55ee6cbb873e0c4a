"""D108: in-memory tensors are fetched one sample at a time and collated back into a batch.

## What it does
Flags a training `DataLoader` in the training process (`num_workers=0`) over a map-style dataset
whose `__getitem__` only indexes tensors held in memory (a `TensorDataset`, or each sample
measured at ten trivial ops or less), when waiting for that loader takes 25% or more of the step
(with several loaders, its own share of the data wait). A `collate_fn` that does work of its own
(50 trivial ops per sample or more) is rule D111's case instead, and a loader without automatic
batching (`batch_size=None`, a `BatchSampler` as its sampler: this rule's fix) is left alone.

## Why is this bad
The data is already a batch-shaped tensor, but the default loader indexes it once per sample (a
Python call and a few ops each) and then `torch.stack`s the samples back together. One indexing
op with the whole batch's indices does the same work at once. Worker processes do not help here:
handing a batch over from a worker costs more than building it (rule D101 stays silent).

Estimated saving: four fifths of the data time per step (`bench/rule_fix_speedups.py`
measured a batched fetch 6.1x faster over an epoch, i.e. 84% saved).

Measured saving: after the run the what-if probe fetches the same batches of a copy of the dataset
as the program does (per sample, then collated) and indexed whole (a `BatchSampler` as sampler,
`batch_size=None`), interleaved; when the batched side returns the very same batch, the saving is
the data time's share times the share of the fetch time it saved. Measured no faster: nothing is
reported.

## Example
```python
loader = DataLoader(TensorDataset(x, y), batch_size=256, shuffle=True)
```

## Use instead
```python
from torch.utils.data import BatchSampler, RandomSampler
dataset = TensorDataset(x, y)  # indexing it with a list of indices returns a whole batch
sampler = BatchSampler(RandomSampler(dataset), batch_size=256, drop_last=False)
loader = DataLoader(dataset, sampler=sampler, batch_size=None)
```

## Fix safety
Safe: the same batches in the same random order. A custom dataset must accept a list of indices
in `__getitem__` (or define `__getitems__`); `collate_fn` is no longer applied per sample. A
loader built with its own `batch_sampler` keeps it: the fix passes it as the `sampler`.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding, SavingBasis
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import (
    clamp,
    pct,
    secs,
    severity_for,
    step_profile,
    training_loaders,
)
from torchdoctor.diagnose.rules._data_fixes import BATCHED_FETCH_COST, batched_fetch_fix
from torchdoctor.diagnose.rules._loaders import (
    fetches_whole_batches,
    heavy_collate,
    in_memory,
    wait_share,
)
from torchdoctor.diagnose.rules._measured import fastest, how

CODE = "D108"
TITLE = "In-memory tensors fetched one sample at a time (per-sample __getitem__ + collate)"
MIN_DATA_SHARE = 0.25


def _item_cost(run: RunObservation, item_s: float | None) -> str:
    if item_s is None:
        return ""
    floor = run.compute.dispatch_overhead_s
    ops = f", about {item_s / floor:.0f} trivial ops' worth" if floor else ""
    return f": {secs(item_s)} per sample{ops}"


def check(run: RunObservation) -> list[Finding]:
    profile = step_profile(run)
    loaders = [
        ld
        for ld in training_loaders(run)
        if ld.num_workers == 0
        and in_memory(run, ld)
        and not heavy_collate(run, ld)
        and not fetches_whole_batches(ld)  # indexed a batch at a time already
    ]
    if profile is None or not loaders:
        return []
    loader = max(loaders, key=lambda ld: ld.wait_s)
    step_s = profile.step_s
    # with two loaders zipped, only this loader's part of the data time
    data_s = profile.seconds("data") * wait_share(run, loader)
    share = clamp(data_s / step_s)
    if share < MIN_DATA_SHARE:
        return []
    saving = clamp(share * (1 - BATCHED_FETCH_COST))
    basis: SavingBasis = "estimated"
    saving_how = f"assumes a batched fetch costs {BATCHED_FETCH_COST:.0%} of the data time"
    measured = fastest(run, "data.batched_fetch")
    if measured is not None and measured.subject not in ("", loader.location):
        measured = None  # timed on another loader: this one's dataset took no list of indices
    if measured is not None:
        if measured.ratio >= 1:
            return []  # indexing whole batches measured no faster on this dataset
        # both sides fetched in one process, interleaved: the ratio holds at any machine load
        saving = clamp(share * (1 - measured.ratio))
        basis, saving_how = "measured", how(measured, "fetching a batch")
    evidence = [
        f"Fetching and collating batches took {pct(share)} of each step "
        f"({secs(data_s)} of {secs(step_s)}).",
        f"{loader.dataset_type or 'The dataset'} at {loader.location} is indexed one sample at a "
        "time" + _item_cost(run, loader.item_s) + ".",
    ]
    if loader.collate_s is not None:
        evidence.append(f"Collating a batch took {secs(loader.collate_s)}.")
    if basis == "measured":
        evidence.append(f"Measured: {saving_how}.")
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity=severity_for(saving),
            saving=saving,
            evidence=evidence,
            fix=batched_fetch_fix(loader),
            source="docs/techniques/data-loading.md; PyTorch docs: torch.utils.data (automatic "
            "batching, batch_size=None)",
            explanation="Each sample is indexed separately and stacked back into a batch; one "
            "indexing op with all the batch's indices does it at once.",
            details={
                "data_s": data_s,
                "step_s": step_s,
                "item_s": loader.item_s,
                "collate_s": loader.collate_s,
                "location": loader.location,
            },
            saving_basis=basis,
            saving_how=saving_how,
        )
    ]
