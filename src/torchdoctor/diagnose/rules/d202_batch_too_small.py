"""D202: the step is overhead-bound: the batch is too small to keep the device busy.

## What it does
Flags runs whose ops are trivially small: the mean op (the step's time outside data loading
divided by the ops dispatched there) takes at most 10 times what dispatching one trivial op costs
on the same machine (measured), while the op count is normal for the model (a loop of tiny ops is
D203; ops from inside a few calls, a recurrent module's time steps, count as the model's) and,
when known, FLOP utilisation is under 10% of the device's peak. Runs that load data in
the training process are judged only when the probes count the data-loading ops apart. A run
whose ops take up to 25 times the trivial-op cost at a measured FLOP utilisation under 10% (a
small batch through wide layers, where the 10x line is crossed with the machine's load; the
optimizer step's ops left out, as they are the parameters' size at any batch), or ops of any
size at a utilisation under 1% (an idle device), is judged on the batch what-if alone: it fires only
when the measured time per sample at a larger
batch is at most 0.7x the program's.

## Why is this bad
Each op has a fixed cost of microseconds (Python, the dispatcher, a kernel launch on a GPU)
whatever its size. With a small batch the arithmetic of each op takes less time than that fixed
cost, so the device waits on Python. A larger batch does more useful work per op at almost the
same overhead.

Estimated saving: per sample. With a batch `k = 4` times larger the fixed cost `O` is paid once
for four times the samples, so time per sample falls by `O * (1 - 1/k) / t_step`. `O` is taken
as ops per step times the measured trivial-op cost, a lower bound (autograd adds more per op), and
`t_step` is the median step, and the estimate never exceeds `(1 - 1/k)` of the forward,
backward and optimizer share, where those ops run; both are stated over the step plus the input
waits the measured steps had beyond its own (not divided by a larger batch). Below a 5% saving the
suggestion is not made.
On a CPU run the step and op times are scaled by the share of wall time the training thread had a
CPU (`cpu_share`), so another process's load does not hide or create the finding; runs whose ops
were not counted (torch.compile) are not judged.

Measured saving: after the run the what-if probe times forward and backward of a deep copy of the
model on the real batch it last trained on and on that batch concatenated with itself 2x and 4x,
interleaved, and divides each by its factor: the time per sample. The saving per sample is the
forward and backward share of the step times the measured gain, plus the optimizer step's share
paid once for k times the samples, as is the step's time outside the phases (zero_grad, the
loss, the loop's Python) as the median step took it (the mean also holds spikes a larger batch
does not divide: a worker process preempting the loop, the old workers joined at an epoch's end;
on a loop whose workers start each epoch the mean's stated saving came out 1.5x what `--try
batch_size` gained); where one optimizer stepped and the optimizer what-if timed its step
on a clone, the optimizer's part is no longer than that step (the phase as diagnosed also held
the probes' work at the step's close: 2-3x the clone's step on a 25-layer Adam loop, where the
stated saving came out 1.5x what `--try batch_size` gained); the fix names the smallest factor that
gets 80% of the best measured
saving. The median step's wait for its batch is counted once per step too where the training
loader's workers keep up (their CPU time per batch, spread over them, within the rest of the
step): the wait is then the batch's hand-over, paid per batch at any size; workers that do not
keep up, or loading in the training process, make it the samples' own cost, not divided. The
seconds saved per step are stated over the step plus the input waits the measured
steps had beyond it (an epoch's worker start-up, which the step profile leaves out as a rare
outlier, is paid once per epoch at any batch: on a loop whose workers start each epoch, a share
of the typical step stated 44% where `--try batch_size` gained 12%). Where the batch is not the
inputs' first dimension (a sequence-first model)
nothing is timed and the estimate stands. A factor is timed only where the run's peak memory
plus (k - 1) times the activations its step saved for backward stays under 90% of capacity
(RAM on a CPU). `torchdoctor diagnose --try batch_size` runs the program itself with that
factor's batch and the learning rate scaled, and compares time per sample.

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
estimated saving, ranked below every warning and error (a modelling choice, not a problem), and
never applied automatically (`--try batch_size` measures it when named). When memory
is the reason for the small batch, use gradient accumulation for the statistics and accept the
overhead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from torchdoctor.diagnose.findings import Finding, SavingBasis
from torchdoctor.diagnose.observations import LoaderObservation, RunObservation, WhatIfTiming
from torchdoctor.diagnose.rules._common import (
    COMPUTE_PHASES,
    INPUT_PHASES,
    StepProfile,
    clamp,
    expected_ops,
    median_phase_s,
    model_time_s,
    over_input_waits,
    over_profile_input_waits,
    secs,
    step_profile,
    stepped_optimizers,
    typical_batch_size,
    typical_step_s,
)
from torchdoctor.diagnose.rules._measured import fastest, how, timings
from torchdoctor.diagnose.rules._overhead import (
    OpOverhead,
    cpu_share,
    op_overhead,
    ops_from_inside_calls,
)
from torchdoctor.diagnose.rules._unprobed import on_step_clock

CODE = "D202"
TITLE = "Overhead-bound steps: the batch is too small for the device"
MAX_UTILIZATION = 0.10
MAX_OPS_TO_EXPECTED = 3.0  # above this, D203 (a loop of tiny ops) explains the overhead
BATCH_FACTOR = 4
MIN_SAVING = 0.05  # below this a semantic change is not worth suggesting
# a larger batch must cut forward and backward time per sample by 10% for the batch to be called
# too small (the optimizer step's amortisation alone is fewer updates, not a busier device)
MAX_PER_SAMPLE_RATIO = 0.9
BEST_SHARE = 0.8  # the smallest measured factor that gets this share of the best saving is named
# Ops up to this many times the trivial-op cost, at a measured FLOP utilisation under 10%, get the
# batch what-if too (a batch of 2 through 512-wide layers sat at 6-16x, across the 10x line with the
# load; toy scripts at 28-47x whose planted problem D202 then outranked stay out); without trivial
# ops the rule fires only on a clear measured gain: time per sample at most MEASURED_ONLY_MAX_RATIO
# of the program's, far from where noise could put it
CANDIDATE_OP_RATIO = 25.0
# Below this FLOP utilisation the batch what-if is timed whatever the ops' mean: a batch of 2
# through 1024-wide layers ran at 0.3% of the peak with its weight-gradient ops (the parameters'
# size) at 28x the floor; the measured time per sample still decides (MEASURED_ONLY_MAX_RATIO)
IDLE_UTILIZATION = 0.01
MEASURED_ONLY_MAX_RATIO = 0.7
# paid once per step whatever the batch: the optimizer step (per parameter) and the loop's own
# work outside the phases (zero_grad, the loss and logging calls: per-op dispatch at a small
# batch); `--try batch_size` on two planted scripts gained 0.67-0.78x of a saving that counted
# the optimizer step alone
PER_STEP_PHASES = ("optimizer", "other")


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


def _lr_line(run: RunObservation, factor: int) -> str:
    optimizers = stepped_optimizers(run)
    if not optimizers:
        return f"lr = {factor} * lr  # your update's learning rate, scaled with the batch"
    name = optimizers[0].class_name
    # a user's own optimizer class is not in torch.optim
    built = f"torch.optim.{name}" if name in TORCH_OPTIMIZERS else name
    if name in LINEAR_LR_OPTIMIZERS:
        return f"optimizer = {built}(model.parameters(), lr={factor} * lr)  # linear rule"
    root = factor**0.5
    return f"optimizer = {built}(model.parameters(), lr={root:g} * lr)  # sqrt rule for {name}"


def _training_loader(run: RunObservation) -> LoaderObservation | None:
    return next((ld for ld in run.loaders if ld.role != "eval" and ld.batch_size), None)


def _rows_per_loader_batch(run: RunObservation, loader: LoaderObservation) -> bool:
    """Each batch of the training loader gave the model more rows than the loader's batch_size
    (graphs' nodes, or a dataset that batches its own items)."""
    batch, micro = typical_batch_size(run), _micro_batches(run)
    return bool(batch and loader.batch_size and round(batch / micro) > loader.batch_size)


def _fix(run: RunObservation, batch: float | None, micro: int, factor: int) -> str:
    """The batch change where the batch is made: the loader, or the slice the script samples."""
    loader = _training_loader(run)
    # the batch the steps consumed (the typical one, not a mean an epoch's short last batch
    # pulls down), a whole number of samples per micro-batch; the loader's setting when the steps did not say, or when each of its batches gave the model
    # more rows than its batch_size (a PyG batch of 32 graphs is 677 node rows; DLRM's loader of
    # batch_size=1 yields whole batches of 128): the knob to turn is the loader's
    per_micro = max(1, round(batch / micro)) if batch else None
    if loader is not None and (per_micro is None or _rows_per_loader_batch(run, loader)):
        per_micro = loader.batch_size
    new = f"{factor * per_micro:.0f}" if per_micro else f"{factor} * batch_size"
    if run.loaders:
        line = f"loader = DataLoader(dataset, batch_size={new}, ...)"
    else:
        line = f"batch_size = {new}  # the batch you slice or sample from your tensors"
    if micro > 1 and per_micro:
        line += f"  # x {micro} micro-batches = {factor * per_micro * micro:.0f} per optimizer step"
    if micro >= factor and micro % factor == 0:
        line += (
            f"\n# or keep the effective batch (same lr): accumulate {micro // factor} "
            f"micro-batch(es) of {new} instead of {micro}"
        )
    return (
        f"{line}\n"
        f"# {factor}x fewer steps per epoch: keep the epochs (not the step count), scale the\n"
        "# learning rate with the batch and re-check convergence\n"
        f"{_lr_line(run, factor)}"
    )


@dataclass(frozen=True)
class OverheadBound:
    """What makes a run overhead-bound, as the rule judged it."""

    overhead: OpOverhead
    step_s: float  # CPU seconds of the typical step
    utilization: float | None
    micro_batch: float | None  # samples per forward (None: not seen)


def batch_candidate(run: RunObservation) -> OverheadBound | None:
    """A run whose batch the what-if times (None: not one, or unknown): trivially small ops
    (`OpOverhead.trivial`: the rule's estimate stands on them), or ops up to CANDIDATE_OP_RATIO
    times the trivial-op cost at a FLOP utilisation measured under 10% (a small batch through
    wider layers, where the 10x line is a matter of load). The what-if planner calls it; beyond
    the trivial ops only a measured gain makes the rule fire."""
    if step_profile(run) is None:
        return None
    # CPU seconds of the step: comparable with the per-op floor on a busy machine too
    step_s = typical_step_s(run) * cpu_share(run)
    overhead = op_overhead(run, model_time_s(run))
    if overhead is None:
        return None
    expected = expected_ops(run)
    if overhead.ops_per_step > MAX_OPS_TO_EXPECTED * expected and not ops_from_inside_calls(
        run, expected
    ):
        return None  # a Python loop of tiny ops: D203's
    utilization = run.compute.utilization
    if utilization is not None and utilization > 1.0:
        utilization = None  # above the peak: the peak was measured too low, so it says nothing
    if utilization is not None and utilization >= MAX_UTILIZATION:
        return None
    batch_sized = _batch_sized(run, overhead)
    small_ops = batch_sized.trivial or (
        utilization is not None
        and (
            batch_sized.mean_op_s <= CANDIDATE_OP_RATIO * batch_sized.dispatch_s
            or utilization < IDLE_UTILIZATION
        )
    )
    if not small_ops:
        return None
    batch = typical_batch_size(run)
    micro = batch / _micro_batches(run) if batch else None
    return OverheadBound(overhead, step_s, utilization, micro)


def _batch_sized(run: RunObservation, overhead: OpOverhead) -> OpOverhead:
    """The per-op costs of the ops whose size the batch sets: the step's less the optimizer
    step's, where its ops were counted. An optimizer's ops are the parameters' size at any batch:
    Adam's per-tensor loop over 1024-wide layers made a batch-of-2 loop's mean op 35x the
    dispatch floor (m02), its forward and backward a fraction of that."""
    optimizer_ops = run.compute.optimizer_ops_per_step
    if not optimizer_ops or optimizer_ops >= overhead.ops_per_step:
        return overhead
    compute_s = (model_time_s(run) - median_phase_s(run, "optimizer")) * cpu_share(run)
    ops = overhead.ops_per_step - optimizer_ops
    if compute_s <= 0:
        return overhead
    return OpOverhead(ops_per_step=ops, mean_op_s=compute_s / ops, dispatch_s=overhead.dispatch_s)


def _per_step_share(run: RunObservation, profile: StepProfile) -> float:
    """The step's share paid once per step (PER_STEP_PHASES; the loop's other work as the
    median step paid it: its spikes are not paid per step), the optimizer's phase no longer
    than its step timed on a clone (on the steps' clock) where one optimizer stepped and the
    optimizer what-if timed it: the phase as diagnosed holds the probes' work at the step's close
    too, which a larger batch does not amortise in the program (multi_respawn_adam: the phase
    was 2-3x the clone's step, and D202 stated 52-53% where `--try batch_size` gained 33-34%)."""
    optimizer_s = profile.seconds("optimizer")
    clone = fastest(run, "optimizer")
    if clone is not None and len(stepped_optimizers(run)) == 1:
        optimizer_s = min(optimizer_s, on_step_clock(run, clone.as_run_s, clone))
    # the median step's: a cost in every step shows there; the spikes the mean also holds (a
    # worker process preempting the loop, the old workers joined at an epoch's end, a garbage
    # collection) are not paid once per step, and a larger batch does not divide them by k
    # (d103_workers_respawned: a mean of 2.3 ms, a median of 1.5 ms, steady steps 0.3-0.7 ms)
    other_s = median_phase_s(run, *(phase for phase in PER_STEP_PHASES if phase != "optimizer"))
    handover_s = _batch_handover_s(run, profile)
    return (
        clamp((optimizer_s + other_s + handover_s) / profile.step_s) if profile.step_s > 0 else 0.0
    )


def _batch_handover_s(run: RunObservation, profile: StepProfile) -> float:
    """The median step's wait for its batch where that wait is a cost per batch: the training
    loader's workers keep up (their CPU time per batch, spread over them, is within the rest of
    the typical step), so the wait is the batch's hand-over to the training process (a queue
    read, each tensor's shared memory mapped), once per batch at any size. Workers that do not
    keep up (an expensive `__getitem__`), or loading in the training process, make the wait
    the samples' own cost, which a larger batch does not divide: 0 then. The epoch's first
    batch (respawned workers' start-up) is not in the median step's wait. On
    d103_workers_respawned (steady waits of 0.8 ms, workers at a fraction of the 2 ms rest of the
    step), D202 counted compute alone and stated 5-7% where `--try batch_size` gained 12-16%."""
    loader = _training_loader(run)
    if loader is None or loader.num_workers <= 0 or loader.worker_cpu_s is None:
        return 0.0
    rest_s = profile.step_s - profile.seconds(*INPUT_PHASES)
    if loader.worker_cpu_s / loader.num_workers > rest_s * cpu_share(run):
        return 0.0
    return median_phase_s(run, *INPUT_PHASES)


def measured_saving(
    run: RunObservation, max_ratio: float = MAX_PER_SAMPLE_RATIO
) -> tuple[float, WhatIfTiming | None] | None:
    """Share of the step time per sample that a larger batch saves, from the batch what-if: the
    forward and backward share scaled by the measured time per sample, the PER_STEP_PHASES paid
    once per k times the samples; the smallest factor that gets 80% of the best saving, among
    those whose time per sample is at most `max_ratio` of the program's. None: not measured;
    (0, None): measured, and a larger batch is not that much cheaper per sample."""
    profile = step_profile(run)
    found = [t for t in timings(run, "batch") if t.batch_factor and t.as_run_s > 0]
    if profile is None or not found:
        return None
    model_share = profile.share("forward", "backward")
    per_step_share = _per_step_share(run, profile)

    def saving(t: WhatIfTiming) -> float:
        k = t.batch_factor or 1
        share = model_share * (1 - t.ratio) + per_step_share * (1 - 1 / k)
        # the typical step's seconds over the steps as run: what the profile left out (an
        # epoch's worker start-up) a larger batch pays once per epoch as now
        return over_profile_input_waits(run, profile, share)

    found = [t for t in found if t.ratio <= max_ratio]
    if not found:  # forward and backward per sample no cheaper: the batch is not too small
        return 0.0, None
    best = max(saving(t) for t in found)
    chosen = min(
        (t for t in found if saving(t) >= BEST_SHARE * best), key=lambda t: t.batch_factor or 1
    )
    return saving(chosen), chosen


def check(run: RunObservation) -> list[Finding]:
    bound, profile = batch_candidate(run), step_profile(run)
    if bound is None or profile is None:
        return []
    overhead, step_s, utilization = bound.overhead, bound.step_s, bound.utilization
    # never more than the model's phases (where the ops run) give back at BATCH_FACTOR
    model_share = profile.share(*COMPUTE_PHASES)
    saving = min(
        over_input_waits(
            run,
            clamp(overhead.floor_s * (1 - 1 / BATCH_FACTOR) / step_s),
            typical_step_s(run),
            median_phase_s(run, *INPUT_PHASES),
        ),
        over_input_waits(
            run,
            model_share * (1 - 1 / BATCH_FACTOR),
            profile.step_s,
            profile.seconds(*INPUT_PHASES),
        ),
    )
    factor, basis = BATCH_FACTOR, cast(SavingBasis, "estimated")
    saving_how = (
        f"estimate: the ops' fixed cost at the measured trivial-op floor, paid once for "
        f"{BATCH_FACTOR}x the samples"
    )
    measured = measured_saving(
        run, MAX_PER_SAMPLE_RATIO if overhead.trivial else MEASURED_ONLY_MAX_RATIO
    )
    if measured is None and not overhead.trivial:
        return []  # the ops are not trivial: only a measurement can say the batch is too small
    if measured is not None:
        saving, timing = measured
        if timing is None:
            return []
        factor, basis = timing.batch_factor or BATCH_FACTOR, "measured"
        per_step = (
            "the optimizer step, the loop's other work and the batch's hand-over from the workers"
            if _batch_handover_s(run, profile) > 0
            else "the optimizer step and the loop's other work"
        )
        saving_how = (
            how(timing, f"forward and backward at {factor}x the batch")
            + f"; {per_step} counted once per step"
        )
    if saving < MIN_SAVING:
        return []
    batch = typical_batch_size(run)
    micro = _micro_batches(run)
    arithmetic = (
        "so the ops do almost no arithmetic."
        if overhead.trivial
        else f"{overhead.mean_op_s / overhead.dispatch_s:.0f}x that: little arithmetic per op."
    )
    evidence = [
        f"{overhead.ops_per_step:.0f} ops per step took {secs(overhead.mean_op_s)} each on "
        f"average; one trivial op costs {secs(overhead.dispatch_s)} on this machine, "
        f"{arithmetic}",
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
    loader = _training_loader(run)
    if batch and loader is not None and _rows_per_loader_batch(run, loader):
        evidence.append(
            f"The training DataLoader's batch_size is {loader.batch_size}: each of its batches "
            f"gives the model {batch / micro:.0f} rows (graphs' nodes, or samples the dataset "
            "batches itself)."
        )
    if basis == "measured":
        evidence.append(f"Measured: {saving_how}.")
    return [
        Finding(
            id=CODE,
            title=TITLE,
            # the batch size is a modelling choice: a suggestion, never a warning
            severity="info",
            saving=saving,
            evidence=evidence,
            fix=_fix(run, batch, micro, factor),
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
                "batch_factor": factor,
            },
            saving_basis=basis,
            saving_how=saving_how,
        )
    ]
