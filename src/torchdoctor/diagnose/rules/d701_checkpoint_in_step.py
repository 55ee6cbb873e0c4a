"""D701: checkpoints are saved inside the training step.

## What it does
Flags `torch.save` calls made during measured training steps when they take 2% or more of the
mean step time; a save another process stalled on a busy machine counts at the typical save's
time (the median of the steps that saved).

## Why is this bad
Serialising the model (and optimizer state) and writing it to disk blocks training for as long as
the write takes. Doing it every step or every few steps multiplies that cost; one checkpoint every
few minutes of training protects the run just as well.

Measured saving: the wall time measured inside `torch.save` per step (and per epoch, when the
epoch's length is known), minus what saving every N steps still costs (N chosen so a save costs
1% of the training between two saves, at most one epoch's steps: a checkpoint per epoch).

## Example
```python
for step, (x, y) in enumerate(loader):
    train_step(x, y)
    torch.save(model.state_dict(), "model.pt")
```

## Use instead
```python
for step, (x, y) in enumerate(loader):
    train_step(x, y)
    if step % save_every == 0:
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()},
                   "checkpoint.pt")
```

## Fix safety
Safe for the model; a crash loses up to `save_every` steps of progress instead of one.
"""

from __future__ import annotations

import math

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import (
    clamp,
    mean_step_s,
    measured_steps,
    pct,
    secs,
    severity_for,
    step_profile,
    steps_per_epoch,
    typical,
)

CODE = "D701"
TITLE = "Checkpoint saved inside the training step (torch.save)"
MIN_SHARE = 0.02
TARGET_SHARE = 0.01


def _interval(save_s: float, train_s: float, per_epoch: int | None) -> int:
    """Steps between saves so that one costs TARGET_SHARE of the training between them; never
    rarer than once per epoch (when the epoch's length is known)."""
    every = max(1, math.ceil(save_s / (TARGET_SHARE * train_s)))
    return min(every, per_epoch) if per_epoch else every


def check(run: RunObservation) -> list[Finding]:
    profile = step_profile(run)
    io = run.io
    if profile is None or io.saves_in_steps <= 0:
        return []
    # the save time is a mean over every measured step: so is the step it is compared with. A
    # save another process stalled (a busy machine) counts at the typical save's time, in both
    save_per_step = typical(io.save_s_per_step, io.save_s_per_step_typical)
    step_s = mean_step_s(run) - (io.save_s_per_step - save_per_step)
    steps = len(measured_steps(run))
    share = clamp(save_per_step / step_s)
    if share < MIN_SHARE:
        return []
    saves_per_step = io.saves_in_steps / steps
    save_s = save_per_step / saves_per_step if saves_per_step else save_per_step
    train_s = max(step_s - save_per_step, 1e-9)  # the step without saving
    per_epoch = steps_per_epoch(run)
    every = _interval(save_s, train_s, per_epoch)
    # what saving every `every` steps still costs per step; the rest is given back
    kept_s = min(save_per_step, save_s / every)
    saving = clamp((save_per_step - kept_s) / step_s)
    if saving <= 0:
        return []  # already saved that rarely
    once = "once per epoch" if per_epoch and every == per_epoch else f"every {every} steps"
    evidence = [
        f"{io.saves_in_steps} torch.save call(s) in {steps} measured steps took "
        f"{secs(save_per_step)} per step: {pct(share)} of the step.",
        f"One save takes about {secs(save_s)}; saving {once} would cost "
        f"{pct(kept_s / step_s)} of the step.",
    ]
    if per_epoch is not None:
        evidence.append(
            f"Over an epoch of {per_epoch} steps: {secs(save_per_step * per_epoch)} in "
            f"torch.save as run, {secs(kept_s * per_epoch)} saving {once}."
        )
    if io.locations:
        evidence.append("Saved at " + ", ".join(io.locations[:3]) + ".")
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity=severity_for(saving),
            saving=saving,
            saving_basis="measured",
            saving_how=(
                f"the torch.save time measured inside the steps ({secs(save_per_step)} per "
                f"step), less what saving {once} keeps"
            ),
            evidence=evidence,
            fix=f"if step % {every} == 0:\n    torch.save(state, path)",
            source="docs/techniques/checkpoint-resume.md; PyTorch tutorial: Saving and Loading "
            "Models",
            explanation="Each save blocks training for the whole write; saving less often "
            "protects the run almost as well.",
            details={"save_share": share, "save_s": save_s, "suggested_every": every},
        )
    ]
