"""D504: step time grows with the step index.

## What it does
Fits the measured step times against the step index and reports a steady rise: the last third
of the steps at least 50% slower than the first third (on CPU in the training thread's CPU
time, which a busy machine does not inflate), closely following a straight line, with
the growth per step.

## Why is this bad
A step that gets slower every step does work that grows with the run: a history tensor
concatenated or stacked every step, a metric recomputed over every past value, a graph that
grows because a running total keeps its `grad_fn`. Over a long run the cost dominates, and the
same bug usually makes memory grow too (D503).

Estimated saving: the time the growth added over the measured steps (each step brought back to
the first steps' time).

## Example
```python
history = torch.empty(0)
for x, y in loader:
    ...
    history = torch.cat([history, model(x).detach()])  # copies everything every step
    running_mean = history.mean()
```

## Use instead
```python
running_sum += out.sum().item(); count += out.numel()  # O(1) per step
# or keep a list and concatenate once, at the end of the epoch
```

## Fix safety
Safe when the running quantity is computed incrementally to the same value; review it.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import measured_steps, median, pct, secs, severity_for
from torchdoctor.diagnose.rules._growth import linear_trend

CODE = "D504"
TITLE = "Step time grows with every step"
MIN_STEPS = 6
MIN_RATIO = 1.5  # last third of the steps vs the first third (medians)
MIN_FIT = 0.8  # correlation of step time with the step index


def _step_times(run: RunObservation, steps: list) -> list[float]:
    """CPU runs: the training thread's CPU time per step (wall x cpu_share), which other
    processes taking the CPU do not inflate; else wall time (a GPU run's thread waits)."""
    if run.environment.device_type == "cpu" and all(s.cpu_share for s in steps):
        return [s.wall_s * s.cpu_share for s in steps]
    return [s.wall_s for s in steps]


def _measure(run: RunObservation, steps: list) -> str:
    cpu = run.environment.device_type == "cpu" and all(s.cpu_share for s in steps)
    return "CPU time of the training thread per step" if cpu else "Step time"


def check(run: RunObservation) -> list[Finding]:
    steps = [s for s in measured_steps(run) if not s.compiles]
    if len(steps) < MIN_STEPS:
        return []
    times = _step_times(run, steps)
    third = len(steps) // 3
    first = median(times[:third])
    last = median(times[-third:])
    trend = linear_trend([float(s.index) for s in steps], times)
    if trend is None or first <= 0:
        return []
    slope, fit = trend
    if slope <= 0 or fit < MIN_FIT or last < MIN_RATIO * first:
        return []
    total = sum(times)
    added = sum(max(0.0, t - first) for t in times)
    saving = added / total if total > 0 else 0.0
    memory_too = bool(run.memory.retained)
    evidence = [
        f"{_measure(run, steps)} rose by {secs(slope)} per step: the first steps took "
        f"{secs(first)}, the last ones {secs(last)} ({last / first:.1f}x), over {len(steps)} "
        "measured steps.",
        f"The growth added {pct(saving)} of the measured time.",
    ]
    if memory_too:
        evidence.append("Tensors of earlier steps are also kept alive (see D503).")
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity=severity_for(saving),
            saving=saving,
            evidence=evidence,
            fix="# find what grows with the step: a tensor concatenated every step, a metric\n"
            "# recomputed over all past values, a running total that keeps its graph\n"
            "running += loss.item()  # O(1) per step, no graph",
            source="docs/techniques/memory-growth.md",
            explanation="Work that grows with the step index makes a long run ever slower; "
            "it is usually an accumulating history.",
            details={"growth_s_per_step": slope, "first_s": first, "last_s": last, "fit": fit},
            saving_how="time each step took beyond the first third's median, over the measured "
            "steps",
        )
    ]
