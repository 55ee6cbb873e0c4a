"""D214: `backward(retain_graph=True)` followed by another backward through the same graph.

## What it does
Flags training steps in which a `backward(retain_graph=True)` is followed, with no model forward
in between, by another `backward()`: two losses of one forward pass, each with its own backward
through the shared part of the graph (a multi-task model, an auxiliary loss). The time of the
backward calls after the first is measured.

## Why is this bad
Each backward walks the shared trunk again, and `retain_graph=True` keeps every saved activation
alive until the last one. Gradients add up, so one backward of the summed losses gives the same
gradients in one pass and frees the graph at once.

Estimated saving: half of the measured time of the later backward calls (the shared part is not
walked twice; the heads' own backward stays).

## Example
```python
loss_cls.backward(retain_graph=True)
loss_reg.backward()
```

## Use instead
```python
(loss_cls + loss_reg).backward()
```

## Fix safety
Safe: the gradients are the same sum (up to float rounding). Not for a loop that reads or clips
the first loss's gradients before the second backward.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import clamp, pct, secs, severity_for, step_profile

CODE = "D214"
TITLE = "Two backward passes through one graph (retain_graph=True) where one would do"
MIN_PER_STEP = 0.5  # second backwards per step
SHARED = 0.5  # share of a later backward assumed to walk the shared part again


def check(run: RunObservation) -> list[Finding]:
    profile = step_profile(run)
    habits = run.habits
    if profile is None or habits.retained_backwards_per_step < MIN_PER_STEP:
        return []
    later = habits.second_backward_s_per_step
    share = clamp(later / profile.step_s)
    saving = clamp(share * SHARED)
    where = ", ".join(habits.retained_backward_locations[:3]) or "the training loop"
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity=severity_for(saving),
            saving=saving,
            evidence=[
                f"{habits.retained_backwards_per_step:g} backward call(s) per step followed a "
                f"backward(retain_graph=True) with no model forward between ({where}).",
                f"Those later backward calls took {secs(later)} per step, {pct(share)} of the "
                f"step ({secs(profile.step_s)}).",
            ],
            fix="(loss_a + loss_b).backward()  # one pass; no retain_graph",
            source="PyTorch autograd docs (gradients accumulate; retain_graph keeps buffers)",
            explanation="Gradients of a sum are the sum of gradients: one backward through the "
            "shared graph gives them all, and frees it at once.",
            details={"per_step": habits.retained_backwards_per_step, "later_s": later},
            saving_how="half the measured time of the later backward calls (the shared part)",
        )
    ]
