"""D202: the step is overhead-bound: the batch is too small to keep the device busy.

## What it does
Flags runs whose ops are trivially small: the mean op (the step's time outside data loading
divided by the ops dispatched there) takes at most 10 times what dispatching one trivial op costs
on the same machine (measured), while the op count is normal for the model (a loop of tiny ops is
D203) and, when known, FLOP utilisation is under 10% of the device's peak. Runs that load data in
the training process are judged only when the probes count the data-loading ops apart.

## Why is this bad
Each op has a fixed cost of microseconds (Python, the dispatcher, a kernel launch on a GPU)
whatever its size. With a small batch the arithmetic of each op takes less time than that fixed
cost, so the device waits on Python. A larger batch does more useful work per op at almost the
same overhead.

Estimated saving: per sample. With a batch `k = 4` times larger the fixed cost `O` is paid once
for four times the samples, so time per sample falls by `O * (1 - 1/k) / t_step`. `O` is taken
as ops per step times the measured trivial-op cost, a lower bound (autograd adds more per op), and
`t_step` is the median step. Below a 5% saving the suggestion is not made. On a CPU run the
step and op times are scaled by the share of wall time the training thread had a CPU
(`cpu_share`), so another process's load does not hide or create the finding; runs whose ops were
not counted (torch.compile) are not judged.

## Example
```python
loader = DataLoader(dataset, batch_size=4)
```

## Use instead
```python
# 4x the batch; scale the learning rate with it (linear rule for SGD, about sqrt(4)x for
# Adam-type optimizers) and re-check convergence
loader = DataLoader(dataset, batch_size=16)
optimizer = torch.optim.SGD(model.parameters(), lr=4 * base_lr)
```

## Fix safety
Changes semantics: a larger batch changes the optimisation (fewer, less noisy updates per epoch)
and usually needs a new learning rate. A suggestion only, reported as information whatever the
estimated saving, and never applied automatically. When memory
is the reason for the small batch, use gradient accumulation for the statistics and accept the
overhead.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import (
    clamp,
    expected_ops,
    mean_batch_size,
    model_time_s,
    secs,
    step_profile,
    stepped_optimizers,
    typical_step_s,
)
from torchdoctor.diagnose.rules._overhead import cpu_share, op_overhead

CODE = "D202"
TITLE = "Overhead-bound steps: the batch is too small for the device"
MAX_UTILIZATION = 0.10
MAX_OPS_TO_EXPECTED = 3.0  # above this, D203 (a loop of tiny ops) explains the overhead
BATCH_FACTOR = 4
MIN_SAVING = 0.05  # below this a semantic change is not worth suggesting


# Adaptive optimizers (per-parameter step sizes) tolerate a larger batch with about sqrt(k) times
# the learning rate; plain SGD follows the linear rule (Goyal et al. 2017; Malladi et al. 2022).
LINEAR_LR_OPTIMIZERS = ("SGD",)
TORCH_OPTIMIZERS = (
    "SGD",
    "Adam",
    "AdamW",
    "Adamax",
    "Adagrad",
    "Adadelta",
    "ASGD",
    "LBFGS",
    "NAdam",
    "RAdam",
    "RMSprop",
    "Rprop",
    "SparseAdam",
    "Adafactor",
    "Muon",
)


def _micro_batches(run: RunObservation) -> int:
    counts = sorted(s.micro_batches for s in run.steps if s.micro_batches > 0)
    return counts[len(counts) // 2] if counts else 1


def _lr_line(run: RunObservation) -> str:
    optimizers = stepped_optimizers(run)
    if not optimizers:
        return f"lr = {BATCH_FACTOR} * lr  # your update's learning rate, scaled with the batch"
    name = optimizers[0].class_name
    # a user's own optimizer class is not in torch.optim
    built = f"torch.optim.{name}" if name in TORCH_OPTIMIZERS else name
    if name in LINEAR_LR_OPTIMIZERS:
        return f"optimizer = {built}(model.parameters(), lr={BATCH_FACTOR} * lr)  # linear rule"
    root = BATCH_FACTOR**0.5
    return f"optimizer = {built}(model.parameters(), lr={root:g} * lr)  # sqrt rule for {name}"


def _fix(run: RunObservation, batch: float | None, micro: int) -> str:
    """The batch change where the batch is made: the loader, or the slice the script samples."""
    loader = next((ld for ld in run.loaders if ld.role != "eval" and ld.batch_size), None)
    # the batch the steps consumed; the loader's setting when the steps did not say
    per_micro = batch / micro if batch else (loader.batch_size if loader else None)
    new = f"{BATCH_FACTOR * per_micro:.0f}" if per_micro else f"{BATCH_FACTOR} * batch_size"
    if run.loaders:
        line = f"loader = DataLoader(dataset, batch_size={new}, ...)"
    else:
        line = f"batch_size = {new}  # the batch you slice or sample from your tensors"
    if micro > 1 and per_micro:
        line += (
            f"  # x {micro} micro-batches = {BATCH_FACTOR * per_micro * micro:.0f} per "
            "optimizer step"
        )
    if micro >= BATCH_FACTOR and micro % BATCH_FACTOR == 0:
        line += (
            f"\n# or keep the effective batch (same lr): accumulate {micro // BATCH_FACTOR} "
            f"micro-batch(es) of {new} instead of {micro}"
        )
    return (
        f"{line}\n"
        "# scale the learning rate with the batch and re-check convergence\n"
        f"{_lr_line(run)}"
    )


def check(run: RunObservation) -> list[Finding]:
    profile = step_profile(run)
    if profile is None:
        return []
    # CPU seconds of the step: comparable with the per-op floor on a busy machine too
    step_s = typical_step_s(run) * cpu_share(run)
    overhead = op_overhead(run, model_time_s(run))
    if overhead is None or not overhead.trivial:
        return []
    if overhead.ops_per_step > MAX_OPS_TO_EXPECTED * expected_ops(run):
        return []
    utilization = run.compute.utilization
    if utilization is not None and utilization > 1.0:
        utilization = None  # above the peak: the peak was measured too low, so it says nothing
    if utilization is not None and utilization >= MAX_UTILIZATION:
        return []
    saving = clamp(overhead.floor_s * (1 - 1 / BATCH_FACTOR) / step_s)
    if saving < MIN_SAVING:
        return []
    batch = mean_batch_size(run)
    micro = _micro_batches(run)
    evidence = [
        f"{overhead.ops_per_step:.0f} ops per step took {secs(overhead.mean_op_s)} each on "
        f"average; one trivial op costs {secs(overhead.dispatch_s)} on this machine, so the ops "
        "do almost no arithmetic.",
        f"Dispatching them costs at least {secs(overhead.floor_s)} of the "
        f"{secs(step_s)} step (CPU time of the training thread).",
    ]
    if utilization is not None:
        evidence.append(
            f"FLOP utilisation was {100 * utilization:.2f}% of the peak "
            f"({run.compute.peak_source})."
        )
    if batch and micro > 1:
        evidence.append(
            f"Batch size: {batch:.0f} samples per optimizer step "
            f"({batch / micro:.0f} per micro-batch x {micro} micro-batches)."
        )
    elif batch:
        evidence.append(f"Batch size: {batch:.0f}.")
    return [
        Finding(
            id=CODE,
            title=TITLE,
            # the batch size is a modelling choice: a suggestion, never a warning
            severity="info",
            saving=saving,
            evidence=evidence,
            fix=_fix(run, batch, micro),
            source="docs/techniques/batch-size.md; docs/techniques/vectorize-python-loops.md",
            explanation="Each op's fixed cost exceeds its arithmetic; a larger batch does more "
            "work per op.",
            changes_semantics=True,
            details={
                "ops_per_step": overhead.ops_per_step,
                "mean_op_s": overhead.mean_op_s,
                "dispatch_s": overhead.dispatch_s,
                "utilization": utilization,
                "batch_size": batch,
                "micro_batches": micro,
            },
        )
    ]
