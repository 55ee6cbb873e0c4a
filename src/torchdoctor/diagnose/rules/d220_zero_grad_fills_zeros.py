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

Estimated saving: twice the time measured inside `zero_grad(set_to_none=False)` per step, no
more than that time and the backward's together. The fill is one pass over memory the size of
the model; with zeros in place the backward then adds every new gradient into them, a second
pass (reading as well as writing) that `set_to_none=True` also removes: the backward hands the
new gradient over. The time inside zero_grad alone was 0.4-0.5x of what `--try set_to_none`
gained on two planted scripts (20% stated against 35-45% gained, 7% against 11-19%).
Those seconds are stated over the median step plus the input waits the measured steps had
beyond its own (an epoch's start-up of respawned workers: no fill is in it). It stays an estimate:
timed on a copy of the model after the run, with set_to_none=True and
False interleaved, the change came out 0.72-1.36x depending on the order of the calls, because
with set_to_none=True the backward writes fresh gradient tensors each step and what that costs
depends on whether the allocator kept or handed back the memory the last ones held (page
faults), a history the copy does not share with the program (`--try set_to_none` measures it on
the program).

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
from torchdoctor.diagnose.rules._common import (
    INPUT_PHASES,
    clamp,
    median_phase_s,
    over_input_waits,
    pct,
    secs,
    typical_step_s,
)

CODE = "D220"
TITLE = "zero_grad(set_to_none=False) fills every gradient with zeros each step"
MIN_SHARE = 0.005  # below this the fill's share is noise, whatever the program calls
WARNING_SHARE = 0.10
# passes over the gradients' memory that set_to_none=True removes: the fill, then the backward's
# addition into the zeros (the new gradient is handed over instead)
FILL_PASSES = 2


def check(run: RunObservation) -> list[Finding]:
    step_s = typical_step_s(run)
    filling = [o for o in run.optimizers if o.set_to_none is False and o.zero_fill_s]
    if step_s <= 0 or not filling:
        return []
    fill_s = sum(o.zero_fill_s or 0.0 for o in filling)
    share = clamp(fill_s / step_s)
    if share < MIN_SHARE:
        return []
    # the addition into the zeros runs in the backward: never more than that phase holds
    saved_s = min(FILL_PASSES * fill_s, fill_s + median_phase_s(run, "backward"))
    # over the steps as run: the slow steps' extra time (an epoch's start) is not the fill's
    saving = over_input_waits(
        run, clamp(saved_s / step_s), step_s, median_phase_s(run, *INPUT_PHASES)
    )
    optimizer = filling[0]
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity="warning" if share >= WARNING_SHARE else "info",
            saving=saving,
            saving_how=f"estimate: the time measured inside zero_grad(set_to_none=False), "
            f"{secs(fill_s)} per step, and as much again for the backward's addition into the "
            "zeros",
            evidence=[
                (
                    f"The model's zero_grad(set_to_none=False) filled the gradients of "
                    f"{optimizer.class_name} (built at {optimizer.location or 'unknown'})."
                    if optimizer.filled_by_module
                    else f"{optimizer.class_name} at {optimizer.location or 'unknown'} called "
                    "zero_grad(set_to_none=False)."
                ),
                f"Filling the gradients with zeros took {secs(fill_s)} per step, {pct(share)} "
                "of the step; the backward then adds every new gradient into the zeros.",
            ],
            fix="optimizer.zero_grad()  # set_to_none=True, the default since PyTorch 2.0",
            source="PyTorch docs (Optimizer.zero_grad: set_to_none); PyTorch performance "
            "tuning guide",
            explanation="Dropping the gradients costs nothing; zero-filling them is a full pass "
            "over memory the size of the model, and the backward then adds into the zeros.",
            details={"zero_fill_s": fill_s, "share": share},
        )
    ]
