"""D702: printing or logging in every training step takes a measurable share of it.

## What it does
Flags `print` calls during measured training steps when printing, plus turning tensors into text
for it (`Tensor.__repr__`/`__format__`, which an f-string runs before `print` is called), takes 2%
or more of the mean step time.

## Why is this bad
Formatting values and writing them to a terminal or a notebook is slow compared to a short
training step, and printing a CUDA tensor also forces a host-device sync (rule D401). A log line
every N steps carries the same information.

Estimated saving: nine tenths of the measured print time, i.e. printing every 10th step instead
of every step.

## Example
```python
for step, (x, y) in enumerate(loader):
    loss = train_step(x, y)
    print(f"step {step} loss {loss.item():.4f}")
```

## Use instead
```python
for step, (x, y) in enumerate(loader):
    loss = train_step(x, y)
    if step % 10 == 0:
        print(f"step {step} loss {loss.item():.4f}")
```

## Fix safety
Safe for training; fewer lines are printed.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import clamp, pct, secs, severity_for, step_profile

CODE = "D702"
TITLE = "Printing/logging inside every training step"
MIN_SHARE = 0.02
LOG_EVERY = 10


def check(run: RunObservation) -> list[Finding]:
    profile = step_profile(run)
    io = run.io
    if profile is None or io.prints_per_step <= 0:
        return []
    print_s = io.print_s_per_step + io.tensor_format_s_per_step
    share = clamp(print_s / profile.step_s)
    if share < MIN_SHARE:
        return []
    saving = clamp(share * (1 - 1 / LOG_EVERY))
    evidence = [
        f"{io.prints_per_step:g} print call(s) per step took {secs(print_s)} with the "
        f"formatting of tensors ({secs(io.tensor_format_s_per_step)}): "
        f"{pct(share)} of the step ({secs(profile.step_s)}).",
    ]
    if io.locations:
        evidence.append("Printed at " + ", ".join(io.locations[:3]) + ".")
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity=severity_for(saving),
            saving=saving,
            evidence=evidence,
            fix=f"if step % {LOG_EVERY} == 0:\n    print(...)",
            source="seed 001 (tqdm description and loss.item() every step); PyTorch "
            "performance tuning guide",
            explanation="Formatting and writing a line costs more than a short step; every "
            f"{LOG_EVERY}th step says as much.",
            details={"print_share": share, "prints_per_step": io.prints_per_step},
        )
    ]
