"""D209: gradients are clipped while still multiplied by the GradScaler's loss scale.

## What it does
Flags `clip_grad_norm_` / `clip_grad_value_` calls that ran on gradients of an optimizer stepped
through `torch.amp.GradScaler` before `scaler.unscale_(optimizer)` was called for that step.

## Why is this bad
`scaler.scale(loss).backward()` leaves every gradient multiplied by the loss scale (65536 at
first). Clipping those to `max_norm=1.0` compares the threshold against a norm tens of thousands
of times too large, so it clips on every step and, once `scaler.step` divides by the scale, the
update is tens of thousands of times smaller than intended: training silently stalls. This is a
correctness error, not a speed issue.

Estimated saving: none (0); the fix restores the intended training.

## Example
```python
scaler.scale(loss).backward()
torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
scaler.step(optimizer)
scaler.update()
```

## Use instead
```python
scaler.scale(loss).backward()
scaler.unscale_(optimizer)  # gradients back to their true size
torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
scaler.step(optimizer)  # knows they are unscaled and does not divide again
scaler.update()
```

## Fix safety
Changes training: the updates become the size the code intended, which is the point. Runs tuned
around the bug (for example a raised learning rate) need re-tuning.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation

CODE = "D209"
TITLE = "Gradients clipped while still scaled by GradScaler (missing unscale_)"


def check(run: RunObservation) -> list[Finding]:
    bad = [o for o in run.optimizers if o.grad_scaler and o.clip_before_unscale > 0]
    if not bad:
        return []
    evidence = [
        f"{o.class_name} at {o.location or 'an unknown line'}: {o.clip_before_unscale} gradient "
        f"clipping call(s) over {o.steps} step(s) ran before scaler.unscale_(optimizer)."
        for o in bad
    ]
    evidence.append(
        "The clip threshold was compared with gradients still multiplied by the loss scale."
    )
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity="error",
            saving=0.0,
            evidence=evidence,
            fix=(
                "scaler.scale(loss).backward()\n"
                "scaler.unscale_(optimizer)\n"
                "torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
                "scaler.step(optimizer)\n"
                "scaler.update()"
            ),
            source="docs/techniques/gradient-clipping.md; docs/techniques/mixed-precision.md; "
            "PyTorch docs: Automatic Mixed Precision examples (gradient clipping)",
            explanation="Clipping scaled gradients clips against a norm thousands of times too "
            "large, shrinking every update by the loss scale.",
            details={
                "optimizers": [o.class_name for o in bad],
                "calls": sum(o.clip_before_unscale for o in bad),
            },
        )
    ]
