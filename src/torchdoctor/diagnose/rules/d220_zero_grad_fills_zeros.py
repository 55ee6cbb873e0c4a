"""D220: `zero_grad(set_to_none=False)` writes zeros into every gradient each step.

## What it does
Flags an optimizer whose `zero_grad` is called with `set_to_none=False` (or the model's
`model.zero_grad(set_to_none=False)`, which fills the same gradients) and says what the time
measured inside those calls is of a typical training step: a warning from 10%, info below (and
nothing under half a percent, which is within a step's noise). The call is a fact of the program;
the share only sets the severity, so a busy machine that stretches the rest of the step (the fill
was 2% of a profiled step at load 1 and under 2% at load 12) does not make it come and go.

## Why is this bad
With `set_to_none=False` every gradient tensor is filled with zeros each step: a write over
memory the size of the model, and the next backward then adds into it. With `set_to_none=True`
(PyTorch's default since 2.0) the gradients are dropped, and the backward writes them fresh.

Estimated saving: the time measured inside `zero_grad(set_to_none=False)` per step. It is an
estimate of what the change gives back: the backward then allocates the gradients instead of
adding into zeros (usually cheaper; `--try set_to_none` measures it).

## Example
```python
optimizer.zero_grad(set_to_none=False)
loss.backward()
optimizer.step()
```

## Use instead
```python
optimizer.zero_grad()  # set_to_none=True, the default since PyTorch 2.0
loss.backward()
optimizer.step()
```

## Fix safety
Safe for almost every loop. It changes results only where a parameter gets no gradient in some
step (a frozen branch, an unused embedding row block): a zero gradient still moves it under
momentum or weight decay, a None gradient does not; code that reads `p.grad` after zero_grad must
handle None.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import clamp, pct, secs, typical_step_s

CODE = "D220"
TITLE = "zero_grad(set_to_none=False) fills every gradient with zeros each step"
MIN_SHARE = 0.005  # below this the fill's share is noise, whatever the program calls


def check(run: RunObservation) -> list[Finding]:
    step_s = typical_step_s(run)
    filling = [o for o in run.optimizers if o.set_to_none is False and o.zero_fill_s]
    if step_s <= 0 or not filling:
        return []
    fill_s = sum(o.zero_fill_s or 0.0 for o in filling)
    share = clamp(fill_s / step_s)
    if share < MIN_SHARE:
        return []
    optimizer = filling[0]
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity="warning" if share >= 0.1 else "info",
            saving=share,
            saving_how=f"time measured inside zero_grad(set_to_none=False): {secs(fill_s)} per "
            "step",
            evidence=[
                (
                    f"The model's zero_grad(set_to_none=False) filled the gradients of "
                    f"{optimizer.class_name} (built at {optimizer.location or 'unknown'})."
                    if optimizer.filled_by_module
                    else f"{optimizer.class_name} at {optimizer.location or 'unknown'} called "
                    "zero_grad(set_to_none=False)."
                ),
                f"Filling the gradients with zeros took {secs(fill_s)} per step, {pct(share)} "
                "of the step.",
            ],
            fix="optimizer.zero_grad()  # set_to_none=True, the default since PyTorch 2.0",
            source="PyTorch docs (Optimizer.zero_grad: set_to_none); PyTorch performance "
            "tuning guide",
            explanation="Dropping the gradients costs nothing; zero-filling them is a full pass "
            "over memory the size of the model.",
            details={"zero_fill_s": fill_s, "share": share},
        )
    ]
