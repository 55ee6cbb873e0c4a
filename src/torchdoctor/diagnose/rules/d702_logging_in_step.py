"""D702: printing or logging in every training step takes a measurable share of it.

## What it does
Flags `print` calls, records emitted through `logging` and warnings shown (`warnings.warn` with a
filter that shows it every time, to stderr) during measured training steps when
writing them, plus turning tensors into text for them (`Tensor.__repr__`/`__format__`, which an
f-string runs before `print` is called), takes 2% or more of the mean step time; a write another process stalled on a busy machine counts
at the typical write's time (the median of the steps that wrote). Logging already throttled to fewer than one print every two steps
is flagged only when printing every 10th step would still save 2% of the step.

## Why is this bad
Formatting values and writing them to a terminal or a notebook is slow compared to a short
training step, and printing a CUDA tensor also forces a host-device sync (rule D401). A log line
every N steps carries the same information.

Measured saving: the wall time measured inside those calls per step (and per epoch, when the
epoch's length is known), or, when larger, the line profile's share of the step on the lines of
those calls (building the message: the ops inside an f-string's braces), at most the step's time
outside the model, minus what writing every 10th step would cost, i.e. nine tenths of it
for one line per step, nothing for logging already that sparse. File writes by hand (`f.write`)
are not timed here: the line profile names them (D801).

## Example
```python
for step, (x, y) in enumerate(loader):
    loss = train_step(x, y)
    print(f"step {step} loss {loss.item():.4f}")
```

## Use instead
```python
for step, (x, y) in enumerate(loader):
    loss = train_step(x, y)
    if step % 10 == 0:
        print(f"step {step} loss {loss.item():.4f}")
```

## Fix safety
Safe for training; fewer lines are printed.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import (
    clamp,
    mean_step_s,
    pct,
    secs,
    severity_for,
    step_profile,
    steps_per_epoch,
    typical,
)

CODE = "D702"
TITLE = "Printing/logging inside the training loop takes a share of every step"
MIN_SHARE = 0.02
LOG_EVERY = 10
# Below this many prints per step the logging is already throttled (`if step % N == 0`); it is
# reported only when printing every LOG_EVERY-th step would still save MIN_SAVING_THROTTLED.
THROTTLED_PRINTS_PER_STEP = 0.5
MIN_SAVING_THROTTLED = 0.02


def check(run: RunObservation) -> list[Finding]:
    profile = step_profile(run)
    io = run.io
    writes = io.prints_per_step + io.log_records_per_step
    if profile is None or writes <= 0:
        return []
    mean_s = io.print_s_per_step + io.log_s_per_step + io.tensor_format_s_per_step
    # a write another process stalled (a busy machine) counts at the typical write's time, in
    # the step and in the line profile alike (its samples sit on the same lines)
    print_s = typical(mean_s, io.write_s_per_step_typical)
    step_s = mean_step_s(run) - (mean_s - print_s)  # the probes' means count every step
    timed_share = clamp(print_s / step_s)
    stalled = print_s / mean_s if mean_s > 0 else 1.0
    # the lines of the calls, sampled: building the message too (the ops in an f-string's
    # braces), which writing every LOG_EVERY-th step also saves; never over the "other" phase
    sampled = sum(
        line.share
        for line in run.lines.lines
        if line.phase == "other" and line.location in io.write_locations
    )
    share = max(timed_share, min(sampled * stalled, profile.share("other")))
    if share < MIN_SHARE:
        return []
    # writing once every LOG_EVERY steps keeps 1 / (LOG_EVERY * writes per step) of the cost
    kept = min(1.0, 1 / (LOG_EVERY * writes))
    saving = clamp(share * (1 - kept))
    if writes < THROTTLED_PRINTS_PER_STEP and saving < MIN_SAVING_THROTTLED:
        return []
    calls = []
    if io.prints_per_step:
        calls.append(f"{io.prints_per_step:g} print call(s) per step ({secs(io.print_s_per_step)})")
    if io.log_records_per_step:
        calls.append(
            f"{io.log_records_per_step:g} logging record(s) or shown warning(s) per step "
            f"({secs(io.log_s_per_step)})"
        )
    # the parts are means over the steps: their total is the mean too, and the typical write's
    # time (below it when another process stalled some writes) is said apart, never as the
    # total of parts larger than it
    typical_note = (
        f"; at the typical write's time {secs(print_s)}" if print_s < mean_s * 0.995 else ""
    )
    evidence = [
        f"{' and '.join(calls)}, with the formatting of tensors "
        f"({secs(io.tensor_format_s_per_step)}), took {secs(mean_s)} per step on average"
        f"{typical_note}: {pct(share)} of the step ({secs(step_s)}).",
    ]
    if share > timed_share:
        evidence.append(
            f"The line profile puts {pct(share)} of the step on those lines: building the "
            "message (the ops inside an f-string) as well as writing it."
        )
    per_epoch = steps_per_epoch(run)
    if per_epoch is not None:
        evidence.append(
            f"Over an epoch of {per_epoch} steps: {secs(share * step_s * per_epoch)} "
            f"writing log lines; every {LOG_EVERY}th step: "
            f"{secs(share * step_s * per_epoch * kept)}."
        )
    if io.locations:
        evidence.append("Printed at " + ", ".join(io.locations[:3]) + ".")
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity=severity_for(saving),
            saving=saving,
            saving_basis="measured",
            saving_how=(
                f"the print/logging/format time measured inside the steps ({secs(print_s)} per "
                "step), or the line profile's share of those lines when larger (building the "
                f"message), less what writing every {LOG_EVERY}th step keeps"
            ),
            evidence=evidence,
            fix=f"if step % {LOG_EVERY} == 0:\n    print(...)  # or logger.info(...)",
            source="PyTorch docs: Performance Tuning Guide (avoid unnecessary CPU-GPU "
            "synchronization)",
            explanation="Formatting and writing a line costs more than a short step; every "
            f"{LOG_EVERY}th step says as much.",
            details={
                "print_share": share,
                "prints_per_step": io.prints_per_step,
                "log_records_per_step": io.log_records_per_step,
                "write_s_per_step": print_s,
            },
        )
    ]
