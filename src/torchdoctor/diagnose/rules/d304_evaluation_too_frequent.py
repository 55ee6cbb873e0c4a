"""D304: evaluation runs so often that it costs a large share of the run.

## What it does
Flags runs in which validation ran in at least a third of the measured training steps and took
25% or more of the measured time (training steps plus the evaluation cut out of them), in total
and with every evaluation and every step at its median (one evaluation that another process
interrupted on a busy machine does not make validation look long), unless it
ran about once per training epoch or less (a small data set whose epochs are a few steps, or
full-batch training, where each step is an epoch: a GNN validated on its one graph). It counts
only validation: evaluation forwards run with the model in eval mode, or fed by a loader used for
evaluation, or (a reinforcement-learning loop's greedy evaluation episodes, in train mode like
its acting) sampled mostly inside a function the program names as validation (`evaluate_policy`,
`validate`, `run_test`); acting forwards (`collect`, `select_action`) are left out.
A teacher's eval-mode forward in every step of a distillation loop is not validation: when
most evaluation forwards are of a model that never trained, run before their step's backward at
the training batch's size (the loss uses their outputs; with autograd on, as a teacher whose
weights still require grad runs, that is D301's), it stays silent.

## Why is this bad
A validation pass tells how the model is doing; running it after every step (or every few)
spends the run measuring instead of training, and the curve is no more informative than one point
every few hundred steps.

Estimated saving: measured. Evaluating ten times less often saves nine tenths of the measured
evaluation time, as a share of the measured time (training steps plus evaluation).

## Example
```python
for step, (x, y) in enumerate(loader):
    train_step(x, y)
    val_loss = validate(model, val_loader)
```

## Use instead
```python
for step, (x, y) in enumerate(loader):
    train_step(x, y)
    if step % eval_every == 0:  # e.g. a few times per epoch
        val_loss = validate(model, val_loader)
```

## Fix safety
Safe for training: the model is trained the same; the validation curve has fewer points (a
checkpoint picked on the best validation score is chosen among fewer candidates).
"""

from __future__ import annotations

import math

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import (
    clamp,
    measured_steps,
    median,
    pct,
    secs,
    severity_for,
    training_loaders,
)
from torchdoctor.diagnose.rules._lines import (
    evaluation_called_as_validation,
    evaluation_is_validation,
    lines_in_phase,
)

CODE = "D304"
TITLE = "Evaluation runs so often that it takes a large share of the run"
# its saving is a share of the measured time (steps plus evaluation), like D301's: scaled by the
# training share a second time, it ranked below D301 whenever the two came near (CI under load)
SAVING_OF = "run"
MIN_FREQUENCY = 1 / 3  # of the measured steps with an evaluation in them
MIN_SHARE = 0.25  # of the measured time
LESS_OFTEN = 10
ONCE_PER_EPOCH = 1.5  # evaluations per training epoch, with slack for a partly measured epoch


def training_steps_per_epoch(run: RunObservation) -> float | None:
    """Batches per epoch of the loader that fed training, when its data set has a length."""
    sizes = [
        (ld.dataset_len, ld.batch_size, ld.drop_last)
        for ld in training_loaders(run)
        if ld.dataset_len and ld.batch_size and not ld.iterable_dataset
    ]
    if len(sizes) != 1:
        return None
    length, batch, drop_last = sizes[0]
    return length // batch if drop_last else math.ceil(length / batch)


FULL_BATCH_REPEATS = 0.9  # share of training forwards on their previous step's very input


def full_batch(run: RunObservation) -> bool:
    """Full-batch training (a GNN on its one graph: pygcn, pyGAT, PyG's Planetoid examples): no
    training loader, and every evaluation forward ran on the inputs the training forward had just
    seen (the whole data set, masked differently for the loss and for validation), or the training
    forwards ran on the same input tensor step after step, or on none (PyG's Graph U-Net holds
    its graph: `model()`; its link-prediction example validates on other edges of that graph)."""
    evaluation = run.evaluation
    if training_loaders(run):
        return False
    repeated = run.habits.training_input_repeated
    return (
        bool(evaluation.on_training_batches)
        and evaluation.on_training_batches == evaluation.forwards
    ) or (repeated is not None and repeated >= FULL_BATCH_REPEATS)


def _share(evaluation_s: float, steps: list) -> float:
    total = evaluation_s + sum(s.wall_s for s in steps)
    return evaluation_s / total if total > 0 else 0.0


def _typical_share(evaluated: list, steps: list) -> float:
    """The share with each evaluation and each step at its median: one evaluation that another
    process interrupted (a few ms on a busy core, as long as a small validation pass) does not
    make evaluation look frequent and long."""
    if not evaluated:
        return 0.0
    evaluation_s = len(evaluated) * median([s.evaluation_s for s in evaluated])
    total = evaluation_s + len(steps) * median([s.wall_s for s in steps])
    return evaluation_s / total if total > 0 else 0.0


def check(run: RunObservation) -> list[Finding]:
    steps = measured_steps(run)
    if not steps or not run.evaluation.forwards:
        return []
    if not evaluation_is_validation(run) and not evaluation_called_as_validation(run):
        return []
    beside = run.evaluation.beside_training + run.evaluation.beside_training_with_grad
    if beside * 2 > run.evaluation.forwards:
        return []  # mostly a teacher's (or a target network's) forwards the loss uses
    evaluated = [s for s in steps if s.evaluation_s > 0]
    frequency = len(evaluated) / len(steps)
    evaluation_s = sum(s.evaluation_s for s in steps)
    share = min(_share(evaluation_s, steps), _typical_share(evaluated, steps))
    if frequency < MIN_FREQUENCY or share < MIN_SHARE:
        return []
    per_epoch = training_steps_per_epoch(run)
    if per_epoch is not None and frequency * per_epoch <= ONCE_PER_EPOCH:
        return []  # validation once per epoch of a small data set (PyG's mutag_gin): as advised
    if full_batch(run):
        return []  # one step is the whole epoch: validating every step is once per epoch
    saving = clamp(share * (1 - 1 / LESS_OFTEN))
    per_run = evaluation_s / len(evaluated)
    evidence = [
        f"Evaluation ran in {len(evaluated)} of {len(steps)} measured steps, "
        f"{secs(per_run)} each time: {pct(share)} of the measured time.",
        f"Evaluating {LESS_OFTEN}x less often saves about {pct(saving)} of the run.",
    ]
    top = lines_in_phase(run, "evaluation")[:2]
    if top:
        evidence.append(
            "Most evaluation time: "
            + "; ".join(f"{line.location} {pct(line.self_share)} `{line.code}`" for line in top)
        )
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity=severity_for(saving),
            saving=saving,
            evidence=evidence,
            fix="if step % eval_every == 0:  # e.g. a few times per epoch\n"
            "    validate(model, val_loader)",
            source="PyTorch Lightning val_check_interval; PyTorch performance tuning guide",
            explanation="Validation measures the model, it does not train it; a few points per "
            "epoch draw the same curve.",
            details={"frequency": frequency, "share": share, "evaluation_s": evaluation_s},
            saving_basis="measured",
            saving_how=f"measured evaluation time, {LESS_OFTEN - 1}/{LESS_OFTEN} of it, as a "
            "share of the measured time (steps plus evaluation)",
        )
    ]
