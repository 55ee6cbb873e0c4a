"""D221: gradients are never cleared: every step adds its gradients to all the previous ones.

## What it does
Flags an optimizer whose steps found the same gradient tensors as the step before, added to,
with no `zero_grad()` (this optimizer's, or a module's holding its parameters) called in between,
in several steps. With two optimizers (a GAN's generator and discriminator), clearing one does
not clear the other; a frozen teacher's `teacher.zero_grad()` does not clear the student's.

## Why is this bad
`backward()` adds to `.grad`. Without `zero_grad()` each step's update is the sum of every
gradient since the start: the effective learning rate grows with the step count and training
diverges or stalls. This is a correctness error (gradient accumulation clears the gradients
after every optimizer step, which this rule does not flag).

Estimated saving: none (0); the fix makes the updates correct.

## Example
```python
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
```

## Use instead
```python
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
```

## Fix safety
Changes training (it becomes correct). Code that clears gradients by hand with
`p.grad.zero_()` on every parameter does clear them; it may be flagged, and
`optimizer.zero_grad()` is the idiomatic (and cheaper) equivalent.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation

CODE = "D221"
TITLE = "Gradients never cleared (no zero_grad): every step adds to the previous gradients"
MIN_STEPS = 2  # carried-over gradients in at least this many steps


def check(run: RunObservation) -> list[Finding]:
    carrying = [o for o in run.optimizers if o.grads_carried_over >= MIN_STEPS]
    if not carrying:
        return []
    optimizer = carrying[0]
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity="error",
            saving=0.0,
            evidence=[
                f"{optimizer.class_name} at {optimizer.location or 'unknown'}: in "
                f"{optimizer.grads_carried_over} of {optimizer.steps} steps the gradients were "
                "the previous step's, added to, with no zero_grad() called in between.",
            ],
            fix="optimizer.zero_grad()  # once per optimizer step, before backward()",
            source="PyTorch docs: torch.optim.Optimizer.zero_grad; torch.Tensor.backward "
            "(gradients accumulate)",
            explanation="backward() adds to .grad: without zero_grad() every update is the sum "
            "of all gradients so far.",
            details={"grads_carried_over": optimizer.grads_carried_over, "steps": optimizer.steps},
        )
    ]
