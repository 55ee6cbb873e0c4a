"""D301: evaluation runs with autograd on.

## What it does
Flags forward passes of the trained model that were not followed by `backward()` (evaluation,
validation, prediction) and ran without `torch.no_grad()` or `torch.inference_mode()`.

## Why is this bad
With autograd on, every forward records the graph and keeps the activations it would need for a
backward that never comes. That costs time and memory (activations of a whole batch stay alive as
long as the output does), and outputs appended to a list keep their graphs alive: memory grows
with every batch.

Estimated saving: 20% of the time spent in those forwards (graph recording and saved
activations), as a share of evaluation plus training time.

## Example
```python
model.eval()
for x, y in val_loader:
    correct += (model(x).argmax(1) == y).sum()
```

## Use instead
```python
model.eval()
with torch.inference_mode():
    for x, y in val_loader:
        correct += (model(x).argmax(1) == y).sum()
```

## Fix safety
Safe for evaluation code. Tensors created under `inference_mode` cannot later be used in autograd;
use `torch.no_grad()` if the outputs feed training.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import clamp, evaluation_share, pct, secs

CODE = "D301"
TITLE = "Evaluation runs with autograd on (no torch.inference_mode / no_grad)"
AUTOGRAD_COST = 0.2


def check(run: RunObservation) -> list[Finding]:
    ev = run.evaluation
    if ev.forwards <= 0 or ev.with_grad <= 0:
        return []
    share = evaluation_share(run)
    saving = clamp(share * (ev.with_grad / ev.forwards) * AUTOGRAD_COST)
    evidence = [
        f"{ev.with_grad} of {ev.forwards} evaluation forward(s) ran with autograd enabled.",
        f"Evaluation took {secs(ev.seconds)}, {pct(share)} of evaluation plus training time.",
    ]
    if ev.locations:
        evidence.append("At " + ", ".join(ev.locations[:3]) + ".")
    return [
        Finding(
            id=CODE,
            title=TITLE,
            # Always a warning: the memory kept for a backward that never runs can exhaust it.
            severity="warning",
            saving=saving,
            evidence=evidence,
            fix=(
                "@torch.inference_mode()\ndef evaluate(model, loader):\n    model.eval()\n    ..."
            ),
            source="docs/techniques/inference-mode-and-eval.md; PyTorch docs: torch.inference_mode",
            explanation="Autograd records a graph and keeps activations for a backward that "
            "evaluation never runs.",
            details={"with_grad": ev.with_grad, "forwards": ev.forwards, "evaluation_share": share},
        )
    ]
