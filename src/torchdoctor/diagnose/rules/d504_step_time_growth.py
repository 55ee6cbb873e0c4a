"""D504: step time grows with the step index.

## What it does
Reports a steady rise of the step time with the step index, with the growth per step. On CPU it
reads the training thread's CPU time, which other processes taking the CPU do not inflate (on
the steps where it was read; else the step's wall time). It decides only from enough steps,
and only on a rise that noise does not make: a trend test (Mann-Kendall, one chance in a hundred
of coming from steps in random order), every step of the last third slower than every step of
the first third (one slow step, a preemption, is not a rise), the last third at least 50% slower
than the first (medians), and a growth over the run well beyond the steps' spread around the
robust (Theil-Sen) line, spread over the steps rather than one jump (the load that rose once).

It also reads the size of the tensors among the training loop's variables (and the attributes
of the program's own objects among them) at a few checks: one larger at every check by about the
same number of elements per step, that the loop's code (or the object's class) rebuilds from
itself (`seen = torch.cat([seen, batch])`), is a growing history; so is a list of tensors or
numbers appended to every step that a line of the loop (or the method that appends to it) reads
whole (`torch.quantile(torch.stack(norms), 0.9)`, `np.percentile(norms, 90)`). With that cause
in sight, a milder rise is enough (the trend test at one chance in twenty, the last third slower
than the first): a short run sees only the start of a history's growth. Without any rise in the
timings, the history is reported at info level, named with its line: its cost is still to come.

## Why is this bad
A step that gets slower every step does work that grows with the run: a history tensor
concatenated or stacked every step, a metric recomputed over every past value, a graph that
grows because a running total keeps its `grad_fn`. Over a long run the cost dominates, and the
same bug usually makes memory grow too (D503).

Estimated saving: the time the growth added over the measured steps (each step brought back to
the first steps' time), from the Theil-Sen line.

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
from torchdoctor.diagnose.observations import GrowingTensor, RunObservation
from torchdoctor.diagnose.rules._common import measured_steps, median, pct, secs, severity_for
from torchdoctor.diagnose.rules._growth import kendall_z, residual_spread, theil_sen

CODE = "D504"
TITLE = "Step time grows with every step"
MIN_STEPS = 6  # timed steps (CPU readings on CPU) to tell a trend from noise
MIN_RATIO = 1.5  # last third of the steps vs the first third (medians)
MIN_TREND_Z = 2.33  # Mann-Kendall statistic: one chance in a hundred by noise
MIN_GROWTH_SPREADS = 4.0  # growth over the steps vs the steps' robust spread around the line
# a rise between two neighbouring timed steps, beyond what the line gives over their gap, that
# makes this share of the growth over the run is a jump (another process took the core's other
# hardware thread from then on), not a growth. A share, not a local slope: the first steps are
# timed one after another, and their noise over a gap of one step is steeper than a real growth
# (a history concatenated every step: 5.4 -> 15.4 ms CPU over 200 steps, +0.3 ms between steps 4
# and 5)
MAX_JUMP_SHARE = 0.5
# the trend test where a growing history is in sight: one chance in twenty by noise
MIN_TREND_Z_WITH_CAUSE = 1.64


def _cpu_timed(run: RunObservation, steps: list) -> list:
    """CPU runs: the steps whose CPU time was read (each of the first few, then one in
    CPU_SHARE_EVERY: diagnose/steps.py), when there are enough of them."""
    if run.environment.device_type != "cpu":
        return []
    timed = [s for s in steps if s.cpu_share]
    return timed if len(timed) >= MIN_STEPS else []


def _step_times(run: RunObservation, steps: list) -> tuple[list, list[float], str]:
    """(steps, seconds, what is measured): on CPU the training thread's CPU time per step
    (wall x cpu_share), which other processes taking the CPU do not inflate; else wall time (a
    GPU run's thread waits for the device)."""
    timed = _cpu_timed(run, steps)
    if timed:
        times = [s.wall_s * s.cpu_share for s in timed]
        return timed, times, "CPU time of the training thread per step"
    return steps, [s.wall_s for s in steps], "Step time"


def steady_rise(xs: list[float], times: list[float]) -> tuple[float, float, float, float] | None:
    """(slope, intercept, first, last) of a rise noise does not make, else None: a trend test,
    the last third's steps all slower than the first third's, 1.5x in medians, a growth over the
    steps well beyond their spread around the line, and no one jump that makes most of it."""
    rise = _trend(xs, times, MIN_TREND_Z)
    if rise is None:
        return None
    slope, intercept, first, last = rise
    third = len(times) // 3
    if min(times[-third:]) <= max(times[:third]) or last < MIN_RATIO * first:
        return None
    spread = residual_spread(xs, times, slope, intercept)
    growth = slope * (xs[-1] - xs[0])
    if growth < MIN_GROWTH_SPREADS * spread:
        return None
    jumps = [(b - a) - slope * (x1 - x0) for x0, x1, a, b in zip(xs, xs[1:], times, times[1:])]
    if max(jumps) > MAX_JUMP_SHARE * growth:
        return None
    return slope, intercept, first, last


def rise_with_cause(
    xs: list[float], times: list[float]
) -> tuple[float, float, float, float] | None:
    """(slope, intercept, first, last) of a milder rise, for a run whose growing history is in
    sight: the trend test at one chance in twenty and the last third slower than the first
    (medians); else None."""
    rise = _trend(xs, times, MIN_TREND_Z_WITH_CAUSE)
    return rise if rise is not None and rise[3] > rise[2] else None


def _trend(
    xs: list[float], times: list[float], min_z: float
) -> tuple[float, float, float, float] | None:
    """(slope, intercept, first, last): the Theil-Sen line and the medians of the first and last
    thirds, when the trend test passes at `min_z` with a positive slope; else None."""
    third = len(times) // 3
    first, last = median(times[:third]), median(times[-third:])
    line = theil_sen(xs, times)
    if line is None or first <= 0 or kendall_z(xs, times) < min_z or line[0] <= 0:
        return None
    return line[0], line[1], first, last


def check(run: RunObservation) -> list[Finding]:
    steps = [s for s in measured_steps(run) if not s.compiles]
    if len(steps) < MIN_STEPS:
        return []
    timed, times, measure = _step_times(run, steps)
    xs = [float(s.index) for s in timed]
    history = _largest_history(run)
    rise = steady_rise(xs, times)
    if rise is None and history is not None:
        rise = rise_with_cause(xs, times)
        if rise is None:
            return [_history_only(history, measure)]
    if rise is None:
        return []
    slope, intercept, first, last = rise
    # the line over every measured step (CPU readings are sparse after the first steps)
    fitted = [max(first, intercept + slope * s.index) for s in steps]
    saving = sum(t - first for t in fitted) / sum(fitted)
    memory_too = bool(run.memory.retained)
    evidence = [
        f"{measure} rose by {secs(slope)} per step: the first steps took {secs(first)}, the "
        f"last ones {secs(last)} ({last / first:.1f}x), over {len(steps)} measured steps"
        f"{_timed_note(timed, steps)}.",
        f"The growth added {pct(saving)} of the measured time.",
    ]
    if history is not None:
        evidence.append(_history_sentence(history))
    if memory_too:
        evidence.append("Tensors of earlier steps are also kept alive (see D503).")
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity=severity_for(saving),
            saving=saving,
            evidence=evidence,
            fix=_fix_for(history)
            if history is not None
            else "# find what grows with the step: a tensor concatenated every step, a metric\n"
            "# recomputed over all past values, a running total that keeps its graph\n"
            "running += loss.item()  # O(1) per step, no graph",
            source="docs/techniques/memory-growth.md",
            explanation="Work that grows with the step index makes a long run ever slower; "
            "it is usually an accumulating history.",
            details={
                "growth_s_per_step": slope,
                "first_s": first,
                "last_s": last,
                **_history_details(history),
            },
            saving_how="time each measured step took beyond the first third's median, on the "
            "robust (Theil-Sen) line through the timed steps",
        )
    ]


def _timed_note(timed: list, steps: list) -> str:
    return "" if len(timed) == len(steps) else f" ({len(timed)} of them timed in CPU time)"


_HISTORY_FIX = (
    "# keep the pieces in a list and concatenate once (at the epoch's end), or write them\n"
    "# into a buffer of fixed size in place: no step copies everything kept so far\n"
    "pieces.append(batch_values)  # O(1) per step; torch.cat(pieces) when it is read"
)


_LIST_FIX = (
    "# a window of fixed size (`collections.deque(maxlen=200)`), or a running statistic\n"
    "# updated in O(1) per step: no step reads everything kept so far\n"
    "history = collections.deque(maxlen=200)  # torch.stack(list(history)) stays bounded"
)


def _fix_for(history: GrowingTensor) -> str:
    return _LIST_FIX if history.container else _HISTORY_FIX


def _largest_history(run: RunObservation) -> GrowingTensor | None:
    """The growing history among the loop's variables that grew by the most elements (a tensor
    rebuilt from itself before a list read whole: it is copied every step for sure)."""
    growing = run.memory.growing
    tensors = [g for g in growing if not g.container] or growing
    return max(tensors, key=lambda g: g.last_numel - g.first_numel) if tensors else None


def _history_sentence(history: GrowingTensor) -> str:
    where = f" at {history.location}" if history.location else ""
    per_step = (history.last_numel - history.first_numel) / max(
        1, history.last_step - history.first_step
    )
    if history.container:
        return (
            f"`{history.name}` (a {history.container}) grew from {history.first_numel:,} to "
            f"{history.last_numel:,} items between steps {history.first_step} and "
            f"{history.last_step} (about {per_step:,.1f} per step), and is read whole{where}: "
            "each reading converts, and reads, more than the one before."
        )
    return (
        f"`{history.name}` is rebuilt from itself{where}: it grew from {history.first_numel:,} to "
        f"{history.last_numel:,} elements between steps {history.first_step} and "
        f"{history.last_step} (about {per_step:,.0f} per step), so each step copies, and reads, "
        "more than the one before."
    )


def _history_details(history: GrowingTensor | None) -> dict:
    if history is None:
        return {}
    return {
        "history": history.name,
        "history_location": history.location,
        "history_numel": [history.first_numel, history.last_numel],
        "history_steps": [history.first_step, history.last_step],
    }


def _history_only(history: GrowingTensor, measure: str) -> Finding:
    """A growing history whose cost the measured steps do not show yet: info, no saving."""
    return Finding(
        id=CODE,
        title="A list read whole grows with every step: its cost grows with the run"
        if history.container
        else "A tensor grows with every step: its cost grows with the run",
        severity="info",
        saving=0.0,
        evidence=[
            _history_sentence(history),
            f"{measure} did not rise measurably over the measured steps: the growth's cost is "
            "still small here and grows with a longer run.",
        ],
        fix=_fix_for(history),
        source="docs/techniques/memory-growth.md",
        explanation="A list read whole every step, as it grows, is converted and read whole "
        "every step: the work per step grows with the run."
        if history.container
        else "A tensor rebuilt from itself every step is copied whole every step: the "
        "work per step grows with the run, and so does memory.",
        details=_history_details(history),
        saving_basis="not measured",
        saving_how="not measured: the measured steps showed no rise yet",
    )
