"""D301: evaluation runs with autograd on.

## What it does
Flags forward passes of the trained model that were not followed by `backward()` (evaluation,
validation, prediction) and ran without `torch.no_grad()` or `torch.inference_mode()`.

## Why is this bad
With autograd on, every forward records the graph and keeps the activations it would need for a
backward that never comes. That costs time and memory (activations of a whole batch stay alive as
long as the output does), and outputs appended to a list keep their graphs alive: memory grows
with every batch.

Measured saving: after the run the what-if probe times a copy of the model in eval mode on a real
batch, forward with autograd on vs under `torch.inference_mode()`, interleaved (the median of
the rounds' paired ratios, forwards of 4 ms or more a timed call); where the program's forwards
page-faulted (saved activations freed at once, their memory handed back to the system and
faulted in again by the next forward: 500-4000 pages per validation pass of a float64 MLP), the
forward as run is also timed from memory handed back, mixed in the share of the faults the
program paid; the saving is the
time of the evaluation forwards that ran with autograd (measured, excluding the evaluation
loader's waits) times the measured relative gain, as a share of evaluation plus training time.
Estimated saving, without that measurement: 20% of those forwards (graph recording and saved
activations). An evaluation of a run that did not complete, seen only outside the measured steps or
once in their first half (a GAN's sampler at batch 0, an evaluation at iteration 0), runs how often
is unknown: no share of the run and no saving are stated; of a completed run, an evaluation outside
the measured steps is compared with all the training seen. The finding stays a warning even when no
time is gained: the memory kept for a backward that never runs can exhaust it.

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

An RL loop's acting (the policy choosing actions, one observation per environment:
`step_analysis.evaluation_is_acting`) is named as acting, and its fix is `torch.no_grad()`: the
actions and observations go into the rollout that the update trains on.

## Fix safety
Safe for evaluation code. Tensors created under `inference_mode` cannot later be used in autograd;
use `torch.no_grad()` if the outputs feed training.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding, SavingBasis
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import (
    clamp,
    evaluation_share,
    measured_steps,
    pct,
    secs,
    severity_for,
)
from torchdoctor.diagnose.rules._lines import evaluation_is_validation
from torchdoctor.diagnose.rules._measured import fastest, how
from torchdoctor.diagnose.step_analysis import evaluation_frequency_unknown, evaluation_is_acting

CODE = "D301"
SAVING_OF = "run"  # its saving is already a share of evaluation plus training time
TITLE = "Evaluation runs with autograd on (no torch.inference_mode / no_grad)"
ACTING_TITLE = "Acting forwards run with autograd on (no torch.no_grad)"
ACTING_FIX = "with torch.no_grad():\n    action = policy(observation)  # the rollout keeps it"
AUTOGRAD_COST = 0.2
NO_TIME_TO_GAIN = 0.01  # below this share the warning is for memory alone, and says so


def _seen_where(run: RunObservation) -> str:
    steps = measured_steps(run)
    seen = sum(1 for s in steps if s.evaluation_s > 0)
    if not seen:
        return "none of it within the measured steps"
    return f"in {seen} of the {len(steps)} measured steps, early in them"


def check(run: RunObservation) -> list[Finding]:
    ev = run.evaluation
    if ev.forwards <= 0 or ev.with_grad <= 0:
        return []
    share = evaluation_share(run)
    autograd_share = share * (ev.with_grad / ev.forwards)
    if ev.seconds > 0 and ev.forward_seconds > 0:  # the forwards, not the loader's waits
        autograd_share *= clamp(ev.forward_seconds / ev.seconds)
    saving = clamp(autograd_share * AUTOGRAD_COST)
    # an RL loop's acting is part of its training, and is called so (its outputs feed the
    # rollout: no_grad, not inference_mode)
    acting = evaluation_is_acting(run)
    phase = "acting" if acting else "evaluation"
    basis: SavingBasis = "estimated"
    saving_how = f"assumes autograd costs {pct(AUTOGRAD_COST)} of an {phase} forward"
    measured = fastest(run, "evaluation.inference_mode")
    if measured is not None:
        saving = clamp(autograd_share * max(0.0, 1 - measured.ratio))
        basis, saving_how = "measured", how(measured, f"an {phase} forward")
    unknown = evaluation_frequency_unknown(run)
    evidence = [
        f"{ev.with_grad} of {ev.forwards} {phase} forward(s) ran with autograd enabled.",
        f"{phase.capitalize()} took {secs(ev.seconds)}, in a run that did not complete, "
        f"{_seen_where(run)}: how often it runs is unknown, so no share of the run's time (and "
        "no saving) is stated."
        if unknown
        else f"{phase.capitalize()} took {secs(ev.seconds)}, {pct(share)} of {phase} plus "
        "training time.",
    ]
    where = ev.with_grad_locations or ev.locations  # older reports: every evaluation forward
    if where:
        evidence.append("At " + ", ".join(where[:3]) + ".")
    if basis == "measured":
        evidence.append(f"Measured: {saving_how}.")
    if unknown:  # a per-forward gain without a frequency is no share of the run
        basis, saving_how = "estimated", "none stated: how often the evaluation runs is unknown"
    validation = evaluation_is_validation(run)
    if validation and saving < NO_TIME_TO_GAIN and not unknown:
        evidence.append(
            "Little or no time to gain: it stays a warning for memory, since each evaluation "
            "batch's activations are kept for a backward that never runs."
        )
    return [
        Finding(
            id=CODE,
            title=ACTING_TITLE if acting else TITLE,
            # Validation is always a warning: the memory kept for a backward that never runs
            # can exhaust it on a large validation batch. Forwards in the step whose output gets
            # no gradient (a GAN's `G(z).detach()` for the critic, an RL agent acting) run at
            # the training batch size: only their time counts.
            severity="warning" if validation else severity_for(saving),
            saving=saving,
            evidence=evidence,
            fix=ACTING_FIX
            if acting
            else "@torch.inference_mode()\ndef evaluate(model, loader):\n    model.eval()\n    ...",
            source="docs/techniques/inference-mode-and-eval.md; PyTorch docs: torch.inference_mode",
            explanation="Autograd records a graph and keeps activations for a backward that "
            f"{phase} never runs.",
            details={"with_grad": ev.with_grad, "forwards": ev.forwards, "evaluation_share": share},
            saving_basis=basis,
            saving_how=saving_how,
        )
    ]
