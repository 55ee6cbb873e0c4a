"""D220: `zero_grad(set_to_none=False)` writes zeros into every gradient each step.

## What it does
Flags an optimizer whose `zero_grad` is called with `set_to_none=False` (or the model's
`model.zero_grad(set_to_none=False)`, which fills the same gradients) and says what the time
measured inside those calls is of a typical training step: a warning from 10% (of the fill, or
of the measured saving), info below (and nothing under half a percent of fill, which is within a
step's noise). The call is a fact of the program; the shares only set the severity, so a busy
machine that stretches the rest of the step (the fill was 2% of a profiled step at load 1 and
under 2% at load 12) does not make it come and go.

## Why is this bad
With `set_to_none=False` every gradient tensor is filled with zeros each step: a write over
memory the size of the model, and the next backward then adds into it. With `set_to_none=True`
(PyTorch's default since 2.0) the gradients are dropped, and the backward writes them fresh.

Measured saving: after the run the what-if probe times `zero_grad`, forward and backward of a
deep copy of the model on the real batch it last trained on, with `set_to_none=False` (as run:
the backward adds every new gradient into the zeros) and with `set_to_none=True` (it hands the
new gradient over), interleaved, under the program's torch.profiler where its steps ran under
one; the seconds saved, on the steps' clock, are a share of the step without torchdoctor's
probes. The fill alone was 0.4-0.5x of what `--try set_to_none` gained on two scripts: the
backward's additions into the zeros are the rest.

Estimated saving, where the what-if did not run: the time measured inside
`zero_grad(set_to_none=False)` per step, a lower bound (the backward's additions are left out).

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

from torchdoctor.diagnose.findings import Finding, SavingBasis
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import clamp, pct, secs, typical_step_s
from torchdoctor.diagnose.rules._measured import fastest, how
from torchdoctor.diagnose.rules._unprobed import on_step_clock, step_without_probes_s

CODE = "D220"
TITLE = "zero_grad(set_to_none=False) fills every gradient with zeros each step"
MIN_SHARE = 0.005  # below this the fill's share is noise, whatever the program calls
WARNING_SHARE = 0.10


def check(run: RunObservation) -> list[Finding]:
    step_s = typical_step_s(run)
    filling = [o for o in run.optimizers if o.set_to_none is False and o.zero_fill_s]
    if step_s <= 0 or not filling:
        return []
    fill_s = sum(o.zero_fill_s or 0.0 for o in filling)
    share = clamp(fill_s / step_s)
    if share < MIN_SHARE:
        return []
    saving = share
    saving_how = f"time measured inside zero_grad(set_to_none=False): {secs(fill_s)} per step"
    basis: SavingBasis = "estimated"
    measured = fastest(run, "zero_grad")
    if measured is not None:
        # the fill and the backward's additions into the zeros, as the copy's calls took them
        saved_s = on_step_clock(run, measured.as_run_s - measured.alternative_s, measured)
        saving = clamp(saved_s / step_without_probes_s(run))
        basis, saving_how = "measured", how(measured, "zero_grad, forward and backward")
    optimizer = filling[0]
    evidence = [
        (
            f"The model's zero_grad(set_to_none=False) filled the gradients of "
            f"{optimizer.class_name} (built at {optimizer.location or 'unknown'})."
            if optimizer.filled_by_module
            else f"{optimizer.class_name} at {optimizer.location or 'unknown'} called "
            "zero_grad(set_to_none=False)."
        ),
        f"Filling the gradients with zeros took {secs(fill_s)} per step, {pct(share)} of the step.",
    ]
    if basis == "measured":
        evidence.append(f"Measured: {saving_how}.")
    return [
        Finding(
            id=CODE,
            title=TITLE,
            # the call is a fact of the program: the fill's share, or the measured saving where
            # larger, sets the severity
            severity="warning" if max(share, saving) >= WARNING_SHARE else "info",
            saving=saving,
            saving_how=saving_how,
            saving_basis=basis,
            evidence=evidence,
            fix="optimizer.zero_grad()  # set_to_none=True, the default since PyTorch 2.0",
            source="PyTorch docs (Optimizer.zero_grad: set_to_none); PyTorch performance "
            "tuning guide",
            explanation="Dropping the gradients costs nothing; zero-filling them is a full pass "
            "over memory the size of the model, and the backward then adds into the zeros.",
            details={"zero_fill_s": fill_s, "share": share},
        )
    ]
