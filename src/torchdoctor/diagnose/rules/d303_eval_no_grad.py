"""D303: evaluation uses `torch.no_grad()` where `torch.inference_mode()` would do.

## What it does
Reports (as information) runs whose evaluation forwards all ran under `torch.no_grad()` and none
under `torch.inference_mode()`. A frozen teacher's or target network's no-grad forwards, whose
outputs the same step's loss uses (`evaluation.beside_training`), are not counted: their outputs
feed autograd, and `inference_mode` tensors cannot be saved for backward, so `no_grad` is right
there. Nor is an RL loop's acting (`step_analysis.evaluation_is_acting`): the actions and values
it returns go into the rollout or replay buffer that the updates train on.

## Why is this bad
`inference_mode` goes further than `no_grad`: tensors it creates skip version counting and view
tracking, which trims per-op overhead, most visibly with small batches or many small ops.

Estimated saving: 5% of the evaluation time, as a share of evaluation plus training time.

## Example
```python
with torch.no_grad():
    preds = model(x)
```

## Use instead
```python
with torch.inference_mode():
    preds = model(x)
```

## Fix safety
Safe for pure evaluation. Tensors created under `inference_mode` cannot be used later in
autograd or modified in place outside it; keep `no_grad` where the outputs feed training.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import clamp, evaluation_share, pct
from torchdoctor.diagnose.step_analysis import evaluation_is_acting

CODE = "D303"
SAVING_OF = "run"  # its saving is already a share of evaluation plus training time
TITLE = "Evaluation under torch.no_grad instead of torch.inference_mode"
INFERENCE_MODE_GAIN = 0.05


def check(run: RunObservation) -> list[Finding]:
    ev = run.evaluation
    # a frozen teacher's soft targets feed the step's loss: under inference_mode they could not
    # be saved for its backward, so only the other no-grad forwards (validation) count
    validation = ev.under_no_grad - ev.beside_training
    if validation <= 0 or ev.under_inference_mode > 0 or evaluation_is_acting(run):
        return []
    share = evaluation_share(run) * validation / max(ev.forwards, validation)
    saving = clamp(share * INFERENCE_MODE_GAIN)
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity="info",
            saving=saving,
            evidence=[
                f"{validation} of {ev.forwards} evaluation forward(s) ran under "
                "torch.no_grad(), none under torch.inference_mode().",
            ]
            + (
                [
                    f"{ev.beside_training} more no-grad forward(s) of a model that never trained "
                    "fed the step's loss (a teacher or target network): keep no_grad there."
                ]
                if ev.beside_training > 0
                else []
            )
            + (
                [f"These forwards took {pct(share)} of evaluation plus training time."]
                if share > 0
                else []
            ),
            fix="with torch.inference_mode():  # instead of torch.no_grad()\n    ...",
            source="docs/techniques/inference-mode-and-eval.md; PyTorch docs: torch.inference_mode",
            explanation="inference_mode also skips version counting and view tracking.",
            details={"under_no_grad": validation, "evaluation_share": share},
        )
    ]
