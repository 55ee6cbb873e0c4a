"""D101: the DataLoader builds batches in the training process.

## What it does
Flags a training `DataLoader` with `num_workers=0` when waiting for its batches takes a measurable
share (10% or more) of each training step. It stays silent when each sample is only indexed from
memory (a `TensorDataset`, or `__getitem__` measured at ten trivial ops or less): handing batches
over from worker processes then costs more than it saves, and fetching whole batches (D108) is
the fix.

## Why is this bad
With `num_workers=0` every batch is read, decoded, transformed and collated by the training
process itself, so the model sits idle while the next batch is built. Worker processes build
batches in parallel with the step, hiding the loading time behind the compute.

Estimated saving: with `W` workers (one per spare core, or one per core where that leaves less
wait, as `--try workers` starts; at most 8) that each need `t_data` per batch, the training process still waits `max(0, t_data / W - t_compute)` per step, where
`t_compute` is the rest of the step. The workers share the machine's `C` cores with the
training's own work: on a CPU its `T` intra-op threads keep `T` of them busy for `t_compute` (on
a GPU, one core), so a step cannot take less than `(t_data + T * t_compute) / C`, and the wait
is at least that less `t_compute`: with every core busy (`T >= C`) the workers hide at most
`1 - 1/C` of the data time, not all of it. The training process still receives every batch a
worker hands over (the queue, unpickling, mapping its shared memory): 0.35 ms a batch and
0.115 ms per MB, its CPU time measured on a 2-core VM (on the steps' wall clock: divided by
the share of the time the training thread had a CPU), counted in `t_compute` and taken off the
saving (taken as free, the estimate stated 36-41% on a loop where `--try workers` gained
3-13%). The saving is the measured data time minus that remainder and the hand-over; an
estimate that leaves no gain is no finding. It assumes no other load on the machine (the load average after the run is named
beside the estimate where it exceeds the core count): where others' jobs hold the cores, the real
gain is lower, often negative. With one core in all there is no
spare core for a worker, and no estimate: the rule says something there only when the what-if
measured a gain.

Measured saving: after the run the what-if probe fetches batches of the same dataset through a side
DataLoader with 0 and with 1 .. cores workers while the training compute runs after every batch (a
copy of the model on a real batch, forward and backward, then CPU work up to the rest of the
measured step: optimizer, loss, logging), so the workers compete for the cores as they would. The
saving is the share of that side step the best worker count saved, less the workers' start-up
(paid once with persistent workers) spread over one epoch's batches, at most the data wait's share;
the fix names that count. When no worker count measured faster, nothing is reported (the estimate
above is used only when the probe could not run).

## Example
```python
loader = DataLoader(dataset, batch_size=64, shuffle=True)
```

## Use instead
```python
loader = DataLoader(
    dataset, batch_size=64, shuffle=True,
    num_workers=4, persistent_workers=True, prefetch_factor=2,
    pin_memory=torch.cuda.is_available(),
)
```

## Fix safety
Safe: the batches and their order are unchanged. The dataset must be picklable, and random
augmentation inside `__getitem__` should seed each worker (`worker_init_fn`) if it must be
reproducible.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding, SavingBasis
from torchdoctor.diagnose.observations import LoaderObservation, RunObservation, WhatIfTiming
from torchdoctor.diagnose.rules._common import (
    MAX_WORKERS,
    clamp,
    cpu_count,
    loader_wait_with_workers,
    on_cuda,
    pct,
    secs,
    severity_for,
    step_profile,
    suggested_workers,
    training_loaders,
)
from torchdoctor.diagnose.rules._loader_call import rewrite_call
from torchdoctor.diagnose.rules._loaders import collated_batch, in_memory, wait_share
from torchdoctor.diagnose.rules._measured import how, not_measured, timings
from torchdoctor.diagnose.rules._overhead import cpu_share

CODE = "D101"
TITLE = "DataLoader builds batches in the training process (num_workers=0)"
MIN_DATA_SHARE = 0.10
# What the training process still pays for each batch a worker hands over (the queue, the
# unpickling, mapping the batch's shared memory): its CPU time per batch with one worker and no
# compute (bench/worker_handover.py on the 2-core VM, round 9, batches of 4 kB to 12.6 MB: fits
# of 0.36 ms + 0.08 ms/MB and 0.35 ms + 0.115 ms/MB at load 9-14). Without it the estimate took
# the hand-over as free and stated 36-41% on d101 where `--try workers` gained 3-13%.
HANDOVER_BATCH_S = 0.35e-3
HANDOVER_BYTE_S = 0.115e-3 / 1e6


def _cores_busy(run: RunObservation) -> int:
    """Cores the training's own work keeps busy: its intra-op threads on a CPU (one when not
    read), one on a GPU (the process feeding it)."""
    if on_cuda(run):
        return 1
    return max(1, run.environment.intra_op_threads or 1)


def _handover_s(run: RunObservation, loader: LoaderObservation) -> float:
    """The training process's own time per batch a worker hands over (HANDOVER_*; the batch's
    bytes where the collate was weighed), on the steps' wall clock: CPU time is 1/cpu_share
    longer in wall time on a busy machine, as the observed phases it is weighed against."""
    cpu_s = HANDOVER_BATCH_S + HANDOVER_BYTE_S * (loader.collate_bytes or 0)
    return cpu_s / cpu_share(run)


def _wait_with_workers(data_s: float, rest_s: float, workers: int, cpus: int, busy: int) -> float:
    """The wait per step left with `workers` workers sharing `cpus` cores with the training's
    work (`busy` cores for `rest_s`): the workers' hand-over as if each had a core
    (`loader_wait_with_workers`), and no less than the cores' capacity allows."""
    capacity_s = (data_s + busy * rest_s) / max(cpus, 1)  # the step, every core's work summed
    return max(loader_wait_with_workers(data_s, rest_s, workers), capacity_s - rest_s, 0.0)


def _estimated_workers(data_s: float, rest_s: float, cpus: int, busy: int) -> tuple[int, float]:
    """(workers, the wait left with them): one core left to the training (suggested_workers),
    or a worker on every core (as `--try workers` starts) where that leaves less wait: with data
    work several times the step's compute, a second worker on 2 cores gained 34% where the one
    the estimate assumed would have hidden 8%."""
    workers = suggested_workers(cpus)
    left_s = _wait_with_workers(data_s, rest_s, workers, cpus, busy)
    every_core = min(MAX_WORKERS, cpus)
    if every_core > workers:
        more_s = _wait_with_workers(data_s, rest_s, every_core, cpus, busy)
        if more_s < left_s:
            return every_core, more_s
    return workers, left_s


def _cores_words(
    run: RunObservation, workers: int, cpus: int, busy: int, left_s: float, handover_s: float
) -> str:
    """The estimate, with the cores it assumed and, past the free cores, the machine's load."""
    threads = "its GPU's feeding process" if on_cuda(run) else f"{busy} intra-op thread(s)"
    words = (
        f"With {workers} worker(s) on {cpus} CPU core(s), {min(busy, cpus)} of them busy with the "
        f"training's {threads}, the wait per step would drop to about {secs(left_s)}, and "
        f"receiving each batch from a worker would cost the training process about "
        f"{secs(handover_s)} (estimate, from the cores' capacity, assuming no other load"
    )
    load = run.environment.load_average
    if load is not None and load > cpus:  # no core idle, the training's own included
        words += f"; the machine's load average was {load:.1f} after the run: workers may gain less"
    return words + ")."


def _startup_per_step(timing: WhatIfTiming, loader: LoaderObservation) -> float:
    """The workers' start-up beyond a steady batch (paid once per run with persistent workers),
    spread over one epoch's batches: at least one epoch runs, so this is the most it can cost per
    step; a long run pays less."""
    overhead_s = max(0.0, (timing.startup_s or 0.0) - timing.alternative_s)
    batches = (loader.dataset_len or 0) / (collated_batch(loader) or 1)
    return overhead_s / max(batches, 1.0)


def _measured_saving(timing: WhatIfTiming, loader: LoaderObservation) -> float:
    """Share of the side run's step (the program's step replayed) that the workers saved, their
    start-up spread over one epoch taken off."""
    if timing.as_run_s <= 0:
        return 0.0
    return 1 - (timing.alternative_s + _startup_per_step(timing, loader)) / timing.as_run_s


def _startup_note(timing: WhatIfTiming) -> str:
    if not timing.startup_s:
        return ""
    return f"; their start-up ({secs(timing.startup_s)} to a first batch) spread over one epoch"


def check(run: RunObservation) -> list[Finding]:
    profile = step_profile(run)
    loaders = [ld for ld in training_loaders(run) if ld.num_workers == 0 and not in_memory(run, ld)]
    if profile is None or not loaders:
        return []
    loader = max(loaders, key=lambda ld: ld.wait_s)
    data_s = profile.seconds("data") * wait_share(run, loader)  # this loader's part
    if data_s / profile.step_s < MIN_DATA_SHARE:
        return []
    rest_s = profile.step_s - data_s
    cpus = cpu_count(run, loader)
    busy = _cores_busy(run)
    # with workers the training process receives each batch: its own work grows by the hand-over
    handover_s = _handover_s(run, loader)
    workers, left_s = _estimated_workers(data_s, rest_s + handover_s, cpus, busy)
    saving = clamp((data_s - left_s - handover_s) / profile.step_s)
    basis: SavingBasis = "estimated"
    unmeasured = not_measured(run, "DataLoader workers", loader.location)
    saving_how = (
        f"assumes {workers} worker(s) sharing {cpus} core(s) with the training's work "
        f"({min(busy, cpus)} busy), {secs(handover_s)} a batch to receive it, no other load"
    )
    if unmeasured:
        saving_how += f"; not measured: {unmeasured}"
    timed = timings(run, "data.workers")
    if (cpus <= 1 or saving <= 0) and not timed:
        # no spare core (a worker would take the training process's own), or a wait shorter
        # than receiving the batch from a worker: the estimate leaves no gain, no finding
        return []
    if timed:
        measured = max(timed, key=lambda t: _measured_saving(t, loader))
        saving = _measured_saving(measured, loader)
        if saving <= 0:
            return []  # with workers the loop measured no faster on this machine
        saving = min(saving, data_s / profile.step_s)  # never more than the data wait itself
        workers = int(measured.setting.split("=")[1])
        left_s = max(0.0, data_s - saving * profile.step_s)
        basis = "measured"
        saving_how = how(measured, "fetch plus the step's compute") + _startup_note(measured)
    evidence = [
        f"Waiting for data took {pct(data_s / profile.step_s)} of each step "
        f"({secs(data_s)} of {secs(profile.step_s)}).",
        f"The DataLoader at {loader.location} has num_workers=0, so the training process builds "
        "every batch itself.",
    ]
    if loader.item_s is not None:
        evidence.append(f"One sample's __getitem__ took {secs(loader.item_s)}.")
    if basis == "measured":
        evidence.append(f"Measured: {saving_how}.")
    else:
        evidence.append(_cores_words(run, workers, cpus, busy, left_s, handover_s))
        if unmeasured:
            evidence.append(f"The workers what-if did not run: {unmeasured}.")
    settings = {"num_workers": str(workers), "persistent_workers": "True", "prefetch_factor": "2"}
    if not loader.pin_memory:
        settings["pin_memory"] = "True" if on_cuda(run) else "torch.cuda.is_available()"
    fix = rewrite_call(loader, settings)  # the user's own call: their order, sampler, collate
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity=severity_for(saving),
            saving=saving,
            evidence=evidence,
            fix=fix,
            source="docs/techniques/data-loading.md; PyTorch docs: Performance Tuning Guide "
            "(asynchronous data loading)",
            explanation="The model waits while the training process loads data; worker "
            "processes would prepare the next batches during the step.",
            details={
                "data_s": data_s,
                "step_s": profile.step_s,
                "suggested_workers": workers,
                "cpu_count": cpus,
                "wait_with_workers_s": left_s,
                "location": loader.location,
            },
            saving_basis=basis,
            saving_how=saving_how,
        )
    ]
