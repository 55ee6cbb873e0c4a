"""D110: every core already loads data and the steps still wait for it.

## What it does
Flags a training `DataLoader` that does real work per sample (not only indexing in-memory
tensors) and already runs one worker per spare core (rule D102's suggestion), when waiting for
its batches still takes half or more of a typical step, and the workers' CPU time per batch
(measured from the operating system's count, Linux) shows the work in the items is why: per
worker on a spare core (one, when there is none), more than the CPU time of the rest of the
step. Otherwise the workers would keep pace on cores of their own, and the wait is another
process's load or the hand-over of batches, which cheaper items do not remove. A loader whose
workers are started again every epoch is left to rule D103 (part of its wait is start-up), one
whose iterator (and its workers) is started for every batch to rule D107, one with batches of 16
samples or fewer to rule D112 (the per-batch hand-over, not the items, is the cost).

When the steps do not wait that long but the loader runs a worker on every core, the training
process's included (`num_workers=os.cpu_count()`), and the workers' measured CPU time per batch
is at least half the CPU time of the rest of the step (they are busy, not idle on a full queue),
D110 is reported at info level with no saving: the workers and the training process take turns
on the same cores, a cost this run does not measure (on a few cores sharing them can even be
faster; on many cores the training process, which also launches every GPU kernel, is preempted
by a worker per core).

## Why is this bad
The workers build batches more slowly than the model consumes them, and this machine has no core
left for another worker: more workers would only compete with each other and with the training
process. The per-sample work itself must get cheaper: fixed pre-processing done once instead of
every epoch, random augmentation on whole batches instead of one sample at a time.

Estimated saving: in steady state the loader delivers one batch per step, so each of its `w`
workers needs about `t_batch = w * t_step` per batch. If nine tenths of that is work that can be
done once (rule D105's estimate), the wait becomes `max(0, t_batch / 10 / w - t_compute)`; the
saving is the measured wait minus that. An upper bound: augmentation that must stay per sample
is not removed.

## Example
```python
class Images(Dataset):
    def __getitem__(self, i):
        return decode_and_normalise(self.paths[i]), self.labels[i]  # every epoch

loader = DataLoader(Images(paths), batch_size=64, num_workers=7)  # on 8 cores
```

## Use instead
```python
class Images(Dataset):
    def __init__(self, paths, labels):
        self.x = torch.stack([decode_and_normalise(p) for p in paths])  # once
        self.labels = torch.as_tensor(labels)

    def __getitem__(self, i):
        return self.x[i], self.labels[i]
```

## Fix safety
Needs review: only deterministic work can be done once, and a cache costs memory or disk; random
augmentation must stay random (apply it per batch, vectorised).
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import LoaderObservation, RunObservation
from torchdoctor.diagnose.rules._common import (
    clamp,
    cpu_count,
    loader_wait_with_workers,
    new_iterator_per_batch,
    pct,
    secs,
    severity_for,
    suggested_workers,
    training_loaders,
    typical_step_s,
)
from torchdoctor.diagnose.rules._data_fixes import (
    CACHED_ITEM_COST,
    batched_fetch_fix,
    cheaper_items_fix,
)
from torchdoctor.diagnose.rules._loader_call import rewrite_call
from torchdoctor.diagnose.rules._loaders import (
    in_memory,
    small_batches_through_workers,
    waiting_loader,
)
from torchdoctor.diagnose.rules._overhead import cpu_share
from torchdoctor.diagnose.rules._respawn import respawns_each_epoch

CODE = "D110"
TITLE = "Steps wait for data with a DataLoader worker on every spare core"
EVERY_CORE_TITLE = "A DataLoader worker on every core: none left for the training process"
MIN_DATA_SHARE = 0.5
# the workers' CPU time per batch, against the rest of the step's, from which they are busy
# enough to take turns with the training process (below: mostly idle on a full prefetch queue)
BUSY_WORKERS = 0.5


def _fix(loader: LoaderObservation) -> str:
    if loader.iterable_dataset or loader.item_s is not None:
        return cheaper_items_fix()
    # __getitem__ ran only in workers, untimed: it may be plain indexing of in-memory tensors
    batched = batched_fetch_fix(loader, drop_workers=True)
    return (
        "# 0. if __getitem__ only indexes tensors already in memory, the workers cost more than\n"
        "#    they save: fetch whole batches in this process instead (rule D109)\n"
        f"{batched}\n{cheaper_items_fix()}"
    )


def keeps_pace(
    run: RunObservation, loader: LoaderObservation, data_s: float, step_s: float
) -> bool:
    """The workers' measured CPU time per batch, shared over the spare cores, is at most the
    CPU time of the rest of the step: on their own cores they would deliver a batch before the
    step needs it, so the wait is another process's load or the hand-over, not the work in
    the items (which is what D110 says to make cheaper). CPU times, so that a busy machine's
    stretched wait does not decide. With no spare core (the program and its workers on one),
    a batch is built while the step waits: it is then at most half the step."""
    if not loader.worker_cpu_s:
        return False
    per_core_s, compute_cpu_s = _cpu_per_batch(run, loader, data_s, step_s)
    return per_core_s <= compute_cpu_s


def _cpu_per_batch(
    run: RunObservation, loader: LoaderObservation, data_s: float, step_s: float
) -> tuple[float, float]:
    """(the workers' CPU seconds per batch per spare core they share, the CPU seconds of the
    rest of the step)."""
    cores = min(loader.num_workers, suggested_workers(cpu_count(run, loader)))
    return (loader.worker_cpu_s or 0.0) / cores, (step_s - data_s) * cpu_share(run)


def _every_core(run: RunObservation, saturated: list[LoaderObservation], step_s: float):
    """Info, no saving: a busy loader with a worker on every core, the training process's
    included. What the sharing costs depends on the machine (below), so nothing is claimed."""
    for loader in saturated:
        cpus = cpu_count(run, loader)
        if cpus < 2 or loader.num_workers < cpus or not loader.worker_cpu_s:
            continue
        data_s = min(waiting_loader(run, [loader])[1], step_s)
        compute_cpu_s = (step_s - data_s) * cpu_share(run)
        if loader.worker_cpu_s < BUSY_WORKERS * compute_cpu_s:
            continue
        workers = "max(1, (os.cpu_count() or 2) - 1)"
        return [
            Finding(
                id=CODE,
                title=EVERY_CORE_TITLE,
                severity="info",
                saving=0.0,
                evidence=[
                    f"The DataLoader at {loader.location} has num_workers={loader.num_workers} "
                    f"on {cpus} CPU core(s): a worker on every core, none left for the "
                    "training process.",
                    f"The workers ran {secs(loader.worker_cpu_s)} of CPU time per batch "
                    f"(measured), against {secs(compute_cpu_s)} of CPU time for the rest of "
                    "the step: while they build batches, they and the training step take turns "
                    "on the same cores.",
                ],
                fix=rewrite_call(loader, {"num_workers": workers}),
                source="docs/techniques/data-loading.md; PyTorch docs: torch.utils.data",
                explanation="A worker per core preempts the training process, which on a GPU "
                "launches every kernel; one core left to it keeps the step running while "
                "the workers build batches.",
                saving_basis="not measured",
                saving_how="not measured: the cores are shared either way on this machine; "
                "the cost grows with the core count (a worker per core)",
                details={
                    "num_workers": loader.num_workers,
                    "cpu_count": cpus,
                    "worker_cpu_s_per_batch": loader.worker_cpu_s,
                    "compute_cpu_s": compute_cpu_s,
                    "location": loader.location,
                },
            )
        ]
    return []


def check(run: RunObservation) -> list[Finding]:
    step_s = typical_step_s(run)
    saturated = [
        ld
        for ld in training_loaders(run)
        if ld.num_workers > 0
        and not in_memory(run, ld)
        and ld.num_workers >= suggested_workers(cpu_count(run, ld))
        and not respawns_each_epoch(run, ld)  # the wait is partly start-up: rule D103 first
        and not new_iterator_per_batch(ld)  # workers started for every batch: rule D107
        and not small_batches_through_workers(run, ld)  # the hand-over, not the items: D112
    ]
    if not saturated or step_s <= 0:
        return []
    loader, data_s = waiting_loader(run, saturated)
    share = clamp(data_s / step_s)
    if share < MIN_DATA_SHARE or keeps_pace(run, loader, data_s, step_s):
        return _every_core(run, saturated, step_s)
    cpus = cpu_count(run, loader)
    batch_s = loader.num_workers * step_s  # what one worker spends per batch, in steady state
    left_s = loader_wait_with_workers(
        batch_s * CACHED_ITEM_COST, step_s - data_s, loader.num_workers
    )
    saving = clamp((data_s - left_s) / step_s)
    if loader.worker_cpu_s:
        per_core_s, compute_cpu_s = _cpu_per_batch(run, loader, data_s, step_s)
        built = (
            f"The workers ran {secs(loader.worker_cpu_s)} of CPU time per batch (measured): "
            f"{secs(per_core_s)} per spare core, more than the {secs(compute_cpu_s)} of CPU "
            "time of the rest of the step; the per-sample work itself must get cheaper."
        )
    else:
        built = (
            f"Each batch takes a worker about {secs(batch_s)} to build; the per-sample work "
            "itself must get cheaper."
        )
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity=severity_for(saving),
            saving=saving,
            evidence=[
                f"Waiting for data took {pct(share)} of a typical step "
                f"({secs(data_s)} of {secs(step_s)}).",
                f"The DataLoader at {loader.location} has num_workers={loader.num_workers} on "
                f"{cpus} CPU core(s): more workers cannot help on this machine.",
                built,
            ],
            fix=_fix(loader),
            source="docs/techniques/data-loading.md; docs/techniques/vectorize-python-loops.md; "
            "PyTorch docs: Performance Tuning Guide",
            explanation="The workers already use every spare core and still fall behind the "
            "model; only cheaper per-sample work (pre-processing once, batched augmentation) "
            "helps.",
            details={
                "data_s": data_s,
                "step_s": step_s,
                "num_workers": loader.num_workers,
                "cpu_count": cpus,
                "batch_build_s": batch_s,
                "worker_cpu_s_per_batch": loader.worker_cpu_s,
                "wait_after_fix_s": left_s,
                "location": loader.location,
            },
        )
    ]
