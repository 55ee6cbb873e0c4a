"""D701: checkpoints are saved inside the training step.

## What it does
Flags `torch.save` calls made during measured training steps when they take 2% or more of the
mean step time.

## Why is this bad
Serialising the model (and optimizer state) and writing it to disk blocks training for as long as
the write takes. Doing it every step or every few steps multiplies that cost; one checkpoint every
few minutes of training protects the run just as well.

Estimated saving: the measured save time per step, minus the 1% of the step that saving every N
steps (N chosen so a save costs 1% of the interval) still costs.

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
from torchdoctor.diagnose.rules._common import clamp, pct, secs, severity_for, step_profile

CODE = "D701"
TITLE = "Checkpoint saved inside the training step (torch.save)"
MIN_SHARE = 0.02
TARGET_SHARE = 0.01


def check(run: RunObservation) -> list[Finding]:
    profile = step_profile(run)
    io = run.io
    if profile is None or io.saves_in_steps <= 0:
        return []
    share = clamp(io.save_s_per_step / profile.step_s)
    if share < MIN_SHARE:
        return []
    saving = clamp(share - TARGET_SHARE)
    saves_per_step = io.saves_in_steps / profile.steps
    save_s = io.save_s_per_step / saves_per_step if saves_per_step else io.save_s_per_step
    train_s = max(profile.step_s - io.save_s_per_step, 1e-9)  # the step without saving
    every = max(1, math.ceil(save_s / (TARGET_SHARE * train_s)))
    evidence = [
        f"{io.saves_in_steps} torch.save call(s) in {profile.steps} measured steps took "
        f"{secs(io.save_s_per_step)} per step: {pct(share)} of the step.",
        f"One save takes about {secs(save_s)}; saving every {every} steps would cost 1% of "
        "the training time.",
    ]
    if io.locations:
        evidence.append("Saved at " + ", ".join(io.locations[:3]) + ".")
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity=severity_for(saving),
            saving=saving,
            saving_basis="measured",
            saving_how="the torch.save time measured inside the steps, less the share kept by saving every N steps",
            evidence=evidence,
            fix=f"if step % {every} == 0:\n    torch.save(state, path)",
            source="docs/techniques/checkpoint-resume.md; PyTorch tutorial: Saving and Loading "
            "Models",
            explanation="Each save blocks training for the whole write; saving less often "
            "protects the run almost as well.",
            details={"save_share": share, "save_s": save_s, "suggested_every": every},
        )
    ]
