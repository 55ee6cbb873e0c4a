"""D109: worker processes hand over batches of tensors that are already in memory.

## What it does
Flags a training `DataLoader` with `num_workers > 0` over a map-style dataset whose samples are
only indexed from memory (a `TensorDataset`, or `__getitem__` measured at ten trivial ops or less;
or, where `__getitem__` ran only in the workers, their measured CPU time per batch, pickling
included, a fifth or less of the training process's wait for the batch: the items are cheap and
the wait is the hand-over) when waiting for its batches takes 25% or more of a typical step, or
when its workers are started again every epoch (`persistent_workers=False`) at a cost of 2% or
more of the epoch.

## Why is this bad
Building such a batch costs a few indexing ops, but a worker must pickle it, send it through a
queue to the training process and unpickle it there; with a small model that hand-over costs
more than the batch itself, and the model waits for it. The training process can index a whole
batch at once faster than any worker can deliver one.

Estimated saving: four fifths of the steady data time per step, as for a batched fetch in the
training process (rule D108; `bench/rule_fix_speedups.py` measured 84% saved), plus the worker
start-up share of each epoch measured as in rule D103 (no workers, no start-up).

## Example
```python
loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True, num_workers=2)
```

## Use instead
```python
from torch.utils.data import BatchSampler, RandomSampler
dataset = TensorDataset(x, y)  # indexing it with a list of indices returns a whole batch
sampler = BatchSampler(RandomSampler(dataset), batch_size=32, drop_last=False)
loader = DataLoader(dataset, sampler=sampler, batch_size=None, num_workers=0)
```

## Fix safety
Safe: the same batches in the same random order, built in the training process. A custom dataset
must accept a list of indices in `__getitem__` (or define `__getitems__`); `collate_fn` is no
longer applied per sample.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import LoaderObservation, RunObservation
from torchdoctor.diagnose.rules._common import (
    clamp,
    new_iterator_per_batch,
    pct,
    secs,
    severity_for,
    training_loaders,
    typical_step_s,
)
from torchdoctor.diagnose.rules._data_fixes import BATCHED_FETCH_COST, batched_fetch_fix
from torchdoctor.diagnose.rules._loader_call import call_keywords, rewrite_call
from torchdoctor.diagnose.rules._loaders import (
    in_memory,
    small_batches_through_workers,
    waiting_loader,
)
from torchdoctor.diagnose.rules._respawn import (
    MIN_RESPAWN_SHARE,
    respawn_cost,
    respawns_each_epoch,
)

CODE = "D109"
TITLE = "DataLoader workers hand over in-memory tensors: the hand-over costs more than the batch"
MIN_DATA_SHARE = 0.25


def cheap_in_workers(run: RunObservation, loader: LoaderObservation) -> bool:
    """A map-style dataset whose `__getitem__` ran only in the workers (untimed there), whose
    workers' measured CPU time per batch is a small part of the training process's wait for it
    (a dataset returning whole batches by tensor indexing, k29 of set 11)."""
    if (
        loader.iterable_dataset
        or not loader.worker_cpu_s
        or new_iterator_per_batch(loader)  # workers started for every batch: rule D107
        or respawns_each_epoch(run, loader)  # start-up in the wait: rule D103
        or small_batches_through_workers(run, loader)  # tiny batches' hand-over: rule D112
    ):
        return False
    # the workers' CPU per batch bounds what fetching it in this process costs: within the
    # batched fetch's assumed cost (a fifth of the wait), the rule's estimate holds
    return loader.worker_cpu_s <= BATCHED_FETCH_COST * waiting_loader(run, [loader])[1]


def _fix(loader: LoaderObservation) -> str:
    given = call_keywords(loader.call_source)
    if loader.batch_size is None and "sampler" in given:  # it already fetches whole batches
        call = rewrite_call(
            loader, {"num_workers": "0"}, drop=("persistent_workers", "prefetch_factor")
        )
        return (
            f"# each fetch already returns a whole batch: fetch it in this process\nloader = {call}"
        )
    return batched_fetch_fix(loader, drop_workers=True)


def check(run: RunObservation) -> list[Finding]:
    loaders = [
        ld
        for ld in training_loaders(run)
        if ld.num_workers > 0 and (in_memory(run, ld) or cheap_in_workers(run, ld))
    ]
    step_s = typical_step_s(run)
    if not loaders or step_s <= 0:
        return []
    loader, data_s = waiting_loader(run, loaders)
    share = clamp(data_s / step_s)
    # start-up paid again every epoch (rule D103 leaves this loader to us): gone with the workers
    respawn = respawn_cost(run, lambda ld: ld is loader)
    respawn_share = respawn.share if respawn else 0.0
    if share < MIN_DATA_SHARE and respawn_share < MIN_RESPAWN_SHARE:
        return []
    saving = clamp(share * (1 - BATCHED_FETCH_COST) + respawn_share)
    evidence = [
        f"Waiting for data took {pct(share)} of a typical step ({secs(data_s)} of {secs(step_s)}).",
        f"The DataLoader at {loader.location} has num_workers={loader.num_workers} over "
        f"{loader.dataset_type or 'a dataset indexed from memory'}: each batch is a few "
        "indexing ops, but every one is pickled and passed between processes."
        if in_memory(run, loader)
        else f"The DataLoader at {loader.location} has num_workers={loader.num_workers}; its "
        f"workers ran {secs(loader.worker_cpu_s or 0.0)} of CPU time per batch (measured, "
        "pickling included): the batch is cheap, and the wait is its hand-over between "
        "processes.",
    ]
    if respawn:
        evidence += respawn.evidence
        evidence.append(
            f"Starting the workers again every epoch costs {pct(respawn_share)} of the epoch."
        )
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity=severity_for(saving),
            saving=saving,
            evidence=evidence,
            fix=_fix(loader),
            source="docs/techniques/data-loading.md; PyTorch docs: torch.utils.data (automatic "
            "batching, batch_size=None)",
            explanation="Worker processes pay a hand-over per batch that costs more than indexing "
            "in-memory tensors; one indexing op per batch in the training process is faster.",
            details={
                "data_s": data_s,
                "step_s": step_s,
                "num_workers": loader.num_workers,
                "respawn_share": respawn_share,
                "dataset_type": loader.dataset_type,
                "location": loader.location,
            },
        )
    ]
