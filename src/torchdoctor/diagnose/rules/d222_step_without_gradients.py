"""D222: the optimizer steps with no gradients: zero_grad() runs between backward() and step().

## What it does
Flags an optimizer that took at least three steps and found no gradient on any of its
parameters in every one of them, although the program ran backward passes.

## Why is this bad
`zero_grad()` (set_to_none=True, the default) drops the gradients. Called after `backward()`
and before `step()`, it throws the step's gradients away: the optimizer moves nothing (or only
applies weight decay) and the model does not learn. The same happens when the loss never
reaches the optimizer's parameters (they were detached or are not the trained model's). This
is a correctness error.

Estimated saving: none (0); the fix makes the model learn.

## Example
```python
loss = criterion(model(x), y)
loss.backward()
optimizer.zero_grad()
optimizer.step()
```

## Use instead
```python
optimizer.zero_grad()
loss = criterion(model(x), y)
loss.backward()
optimizer.step()
```

## Fix safety
Changes training (it starts to learn).
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation

CODE = "D222"
TITLE = "Optimizer steps with no gradients (zero_grad between backward and step)"
MIN_STEPS = 3


def check(run: RunObservation) -> list[Finding]:
    if run.backwards_seen <= 0:
        return []
    empty = [
        o for o in run.optimizers if o.steps >= MIN_STEPS and o.steps_without_gradients >= o.steps
    ]
    if not empty:
        return []
    optimizer = empty[0]
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity="error",
            saving=0.0,
            evidence=[
                f"{optimizer.class_name} at {optimizer.location or 'unknown'} took "
                f"{optimizer.steps} steps, none with a gradient on any of its parameters, "
                f"although {run.backwards_seen} backward() calls ran.",
            ],
            fix="optimizer.zero_grad()\nloss.backward()\noptimizer.step()  # zero_grad before "
            "backward, never between backward and step",
            source="PyTorch docs: torch.optim.Optimizer.zero_grad (set_to_none)",
            explanation="Gradients dropped before step() leave nothing to update the model with.",
            details={"steps": optimizer.steps},
        )
    ]
