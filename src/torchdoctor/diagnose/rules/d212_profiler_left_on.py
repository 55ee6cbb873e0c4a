"""D212: the program's own torch.profiler records every training step.

## What it does
Flags a run in which a `torch.profiler.profile` (or `torch.autograd.profiler.profile`) context of
the program was recording during most measured steps (torchdoctor's own `--profile` window does
not count). Its cost is measured: after the run, forward and backward of a copy of the model on
its real batch, and a step of a clone of its optimizer, are timed inside a profiler with the
program's options and without one (blocks of calls, alternated); the saving is the share of the
step those phases and the loop's other ops (loss, zero_grad: the profiler records every op)
took times the measured gain. The pairs must agree (where the first three do not, two more are
timed, and
of the five the lowest and highest are left out): when one pair finds the profiler costly and
another finds it free (another process's load on a busy machine), the copy decided nothing and the
finding says so. Measured free in every pair: info, not a warning. Without that measurement, a small
forward+backward timed with the profiler on (at
a warm-up step end) and before the program started gives an extra time per op, times the ops of
a step: an estimate, at most nine tenths of the step outside data loading, and where the
copy's pairs disagreed at most the cost their most costly pair saw (an estimate of 83-90% on
d212, pairs of 0.41x-1.36x, where `--try profiler_off` gained 28-38%). While it records, the
per-op overhead rules (D202, D203) are not judged: its own cost per op would be taken for the
program's.

## Why is this bad
The profiler records an event per op (with shapes and stacks when asked) and keeps them all in
memory until the context exits: every step gets slower, and a long run grows its memory. It is
meant for a handful of steps, with a schedule.

Measured saving: forward, backward and the optimizer step with vs without the profiler, timed on
copies (see above). The seconds saved are a share of the steps as they ran: the typical step's plus
the input
waits the measured steps had beyond its own where the training loader has workers (an
epoch's start-up of respawned workers, left out of the typical step as a rare slow one).

## Example
```python
with torch.profiler.profile() as prof:
    for x, y in loader:
        train_step(x, y)
```

## Use instead
```python
schedule = torch.profiler.schedule(wait=10, warmup=2, active=3, repeat=1)
with torch.profiler.profile(schedule=schedule) as prof:
    for x, y in loader:
        train_step(x, y)
        prof.step()
```

## Fix safety
Safe: training is unchanged; only the trace covers fewer steps.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding, SavingBasis
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import over_profile_input_waits, pct, secs, step_profile
from torchdoctor.diagnose.rules._debug_modes import (
    MIN_ACTIVE,
    PER_OP_RULES_SILENT,
    measured_on_copy,
    mode_cost_share,
    most_on_copy,
    undecided_on_copy,
)

CODE = "D212"
TITLE = "torch.profiler left on: the program's profiler records every training step"


def check(run: RunObservation) -> list[Finding]:
    profile = step_profile(run)
    habits = run.habits
    active = habits.profiler_active_share
    if profile is None or active is None or active < MIN_ACTIVE:
        return []
    options = ", ".join(f"{name}=True" for name in habits.profiler_options)
    evidence = [
        f"torch.profiler was recording at the end of {pct(active)} of the measured steps"
        + (f" ({options})." if options else ".")
    ]
    basis: SavingBasis = "not measured"  # until the copy or the benchmark gives a number
    saving, how = 0.0, "not measured (no copy of the model to time, no op count or benchmark)"
    measured = measured_on_copy(run, profile, "profiler", "the profiler", loop_ops=True)
    cost = mode_cost_share(run, profile, habits.profiler_op_overhead_s)
    undecided = undecided_on_copy(run, "profiler")
    if undecided:
        how = f"not measured ({undecided})"
    if measured is not None:  # a copy's forward and backward timed with and without it
        saving, sentence, how = measured
        evidence.append(sentence)
        basis = "measured"
    elif cost is not None:
        saving, seconds = cost
        basis = "estimated"
        evidence.append(
            f"With it on, an op took {secs(habits.profiler_op_overhead_s or 0.0)} longer "
            f"(measured on a benchmark); x {run.compute.ops_per_step:.0f} ops per step = "
            f"{secs(seconds)}, about {pct(saving)} of the step ({secs(profile.step_s)})."
        )
        how = (
            "estimate: extra time per op with the profiler on (measured on a benchmark, on and "
            "off) x ops per step, at most 90% of the step outside data loading"
            + (f"; on a copy, {undecided}" if undecided else "")
        )
        most = most_on_copy(run, profile, "profiler", loop_ops=True)
        if most is not None and most < saving:  # no pair on the copy saw that much
            saving = most
            how += f"; capped at the most one pair saw, {pct(most)} of the step"
    evidence.append(PER_OP_RULES_SILENT)
    # the typical step's seconds over the steps as run: the profiler records no input wait the
    # profile left out as rare (an epoch's start-up of respawned workers)
    saving = over_profile_input_waits(run, profile, saving)
    return [
        Finding(
            id=CODE,
            title=TITLE,
            # a debugging tool has no place in a full training run, unless it was timed and
            # measured free: then it is worth knowing, not a warning with a cost of 0
            severity="info" if basis == "measured" and saving <= 0 else "warning",
            saving=saving,
            evidence=evidence,
            fix="schedule = torch.profiler.schedule(wait=10, warmup=2, active=3, repeat=1)\n"
            "with torch.profiler.profile(schedule=schedule) as prof:\n"
            "    for batch in loader:\n"
            "        train_step(batch)\n"
            "        prof.step()",
            source="PyTorch profiler recipe (torch.profiler.schedule for long jobs)",
            explanation="The profiler records every op of every step; a schedule records a few.",
            details={"active_share": active, "op_overhead_s": habits.profiler_op_overhead_s},
            saving_basis=basis,
            saving_how=how,
        )
    ]
