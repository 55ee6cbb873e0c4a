"""D302: the model is evaluated in train mode although it has Dropout or BatchNorm.

## What it does
Flags evaluation forwards (forwards of the trained model not followed by `backward()`) that ran
while the model was in `train()` mode, when the model has Dropout or BatchNorm layers, whose
behaviour depends on the mode. The forwards `torch.optim.swa_utils.update_bn` runs (train mode on
purpose: BatchNorm statistics recomputed for averaged weights), or that run while a BatchNorm layer
keeps a cumulative average (`momentum=None`, as a refresh of the statistics written by hand sets
it), are not counted, nor the samples
of a generator: the forwards in train mode of a model whose training outputs are another model's
input (a GAN's generator, which learns through the discriminator), or whose training inputs are
another model's outputs (an autoencoder's decoder) called here on no model's output (noise from
the prior), when their own output goes to no model (images kept or saved, which no metric of that
model judges).

## Why is this bad
In train mode Dropout still drops activations and BatchNorm normalises with the batch's own
statistics and updates its running statistics with the evaluation data. The reported metrics are
noisy and wrong, and the model itself changes (running statistics absorb the validation set).
This is a correctness error.

Measured saving: the what-if probe times, on a copy of the model and a real batch at the
evaluation's batch size, the forward in train mode vs in eval mode (both under
`torch.inference_mode()`), interleaved, and measures how much train mode changes the outputs
(shown as evidence); the saving is the time of the evaluation forwards that ran in train mode
times the measured relative gain, as a share of evaluation plus training time (Dropout's random
masks and BatchNorm's batch statistics cost time too: `--try inference_mode` gained 24% of
d302's run). Without that measurement: none (0); the fix makes the evaluation correct.

## Example
```python
for epoch in range(epochs):
    model.train()
    train_one_epoch(model)
    with torch.inference_mode():
        val_loss = sum(criterion(model(x), y) for x, y in val_loader)
```

## Use instead
```python
for epoch in range(epochs):
    model.train()
    train_one_epoch(model)
    model.eval()
    with torch.inference_mode():
        val_loss = sum(criterion(model(x), y) for x, y in val_loader)
```

## Fix safety
Changes the reported metrics (they become correct) and stops the evaluation data leaking into
BatchNorm's running statistics. Remember `model.train()` before the next training epoch.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding, SavingBasis
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import clamp, evaluation_share, pct
from torchdoctor.diagnose.rules._measured import fastest, how
from torchdoctor.diagnose.step_analysis import evaluation_frequency_unknown

CODE = "D302"
SAVING_OF = "run"  # its saving is already a share of evaluation plus training time
TITLE = "Model evaluated in train mode (Dropout/BatchNorm active)"


def check(run: RunObservation) -> list[Finding]:
    ev = run.evaluation
    if ev.in_train_mode <= 0 or not ev.train_mode_sensitive:
        return []
    dropout = sum(m.dropout_layers for m in run.models)
    batchnorm = sum(m.batchnorm_layers for m in run.models)
    layers = []
    if dropout:
        layers.append(f"{dropout} Dropout")
    if batchnorm:
        layers.append(f"{batchnorm} BatchNorm")
    evidence = [
        f"{ev.in_train_mode} of {ev.forwards} evaluation forward(s) ran with model.training=True.",
        "The model has " + (" and ".join(layers) or "mode-dependent") + " layer(s), so train "
        "mode changes its outputs.",
    ]
    if ev.locations:
        evidence.append("At " + ", ".join(ev.locations[:3]) + ".")
    measured = fastest(run, "evaluation.eval_mode")
    if measured is not None and measured.output_change is not None:
        evidence.append(
            f"Measured on a copy of the model and a real batch: train mode changed the outputs by "
            f"{pct(measured.output_change)} (relative L2) against eval mode."
        )
    # no model of the fix's time stands without the copy's timing: not measured, not "0%"
    saving, saving_how = 0.0, "not measured: the fix is for correctness"
    basis: SavingBasis = "not measured"
    # an evaluation of unknown frequency (seen only outside the measured steps) saves no share
    # timed and no faster in eval mode: measured, at no saving (clamp)
    if measured is not None and not evaluation_frequency_unknown(run):
        share = evaluation_share(run) * ev.in_train_mode / max(ev.forwards, 1)
        if ev.seconds > 0 and ev.forward_seconds > 0:  # the forwards, not the loader's waits
            share *= clamp(ev.forward_seconds / ev.seconds)
        saving = clamp(share * (1 - measured.ratio))
        basis, saving_how = "measured", how(measured, "an evaluation forward")
        evidence.append(f"Measured: {saving_how}.")
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity="error",
            saving=saving,
            evidence=evidence,
            fix="model.eval()\nwith torch.inference_mode():\n    ...  # evaluate\nmodel.train()",
            source="docs/techniques/inference-mode-and-eval.md; PyTorch docs: torch.nn.Module.eval",
            explanation="In train mode Dropout drops activations and BatchNorm uses and updates "
            "batch statistics, so metrics are wrong and the model drifts.",
            details={
                "in_train_mode": ev.in_train_mode,
                "forwards": ev.forwards,
                "dropout_layers": dropout,
                "batchnorm_layers": batchnorm,
            },
            saving_basis=basis,
            saving_how=saving_how,
        )
    ]
