"""D305: the model is trained in eval mode although it has Dropout or BatchNorm.

## What it does
Flags training forwards (a gradient from `backward()` reached their output) of a model with
Dropout or BatchNorm layers that ran while the model was in `eval()` mode: an evaluation helper
called `model.eval()` and nothing called `model.train()` before the next training epoch, or a
model (a GAN's generator) switched to eval mode to draw samples and then trained as it is, even
while another model (its discriminator) trains in train mode in the same step. Models are judged
one by one: a model that also trains in train mode in the same step (an adversarial attack
crafted on it in eval mode) is not flagged, nor a frozen network (no parameter takes
gradients) that a loss runs the trained model's output through (a perceptual loss).

## Why is this bad
In eval mode Dropout is off (no regularisation) and BatchNorm normalises with its running
statistics, which stop being updated: the model trains differently from what the code says,
usually overfits or diverges, and the BatchNorm statistics used at evaluation never see the
later weights. This is a correctness error.

Estimated saving: none (0); the fix makes training do what it says.

## Example
```python
def evaluate(model, loader):
    model.eval()
    with torch.inference_mode():
        ...

for epoch in range(epochs):
    for x, y in train_loader:  # epochs after the first train in eval mode
        loss = criterion(model(x), y)
        ...
    evaluate(model, val_loader)
```

## Use instead
```python
for epoch in range(epochs):
    model.train()
    for x, y in train_loader:
        loss = criterion(model(x), y)
        ...
    evaluate(model, val_loader)
```

## Fix safety
Changes training (it becomes what the code intends: Dropout active, BatchNorm statistics
updated). A model deliberately fine-tuned with frozen BatchNorm statistics keeps the root in
train mode and puts only its BatchNorm layers in eval mode, which this rule does not flag.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation

CODE = "D305"
TITLE = "Model trained in eval mode (Dropout off, BatchNorm statistics frozen)"


def check(run: RunObservation) -> list[Finding]:
    habits = run.habits
    if habits.eval_mode_training_forwards <= 0:
        return []
    evidence = [
        f"{habits.eval_mode_training_forwards} training forward(s) of the measured steps ran "
        "with model.training=False, and a gradient reached their output.",
        "The model has Dropout or BatchNorm layer(s), whose behaviour depends on the mode.",
    ]
    if habits.eval_mode_training_locations:
        evidence.append("At " + ", ".join(habits.eval_mode_training_locations[:3]) + ".")
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity="error",
            saving=0.0,
            evidence=evidence,
            fix="model.train()  # before the training steps, after any evaluation",
            source="docs/techniques/inference-mode-and-eval.md; PyTorch docs: torch.nn.Module.train",
            explanation="In eval mode Dropout is off and BatchNorm stops updating its statistics, "
            "so the model trains differently from what the code intends.",
            details={"eval_mode_training_forwards": habits.eval_mode_training_forwards},
        )
    ]
