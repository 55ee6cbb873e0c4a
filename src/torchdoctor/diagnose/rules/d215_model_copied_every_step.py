"""D215: an EMA or "best model" is kept by copying the whole model in every step.

## What it does
Flags a line of the program that, during the measured steps, spends 3% or more of the step copying
a whole model: `copy.deepcopy(model)`, `copy.deepcopy(model.state_dict())`,
`ema.load_state_dict(model.state_dict())`, a `state_dict()` cloned tensor by tensor. It is seen by
the line profile: the line was sampled inside `copy.deepcopy` of parameters, or inside
`Module.state_dict` / `load_state_dict`. A warning needs its saving less two standard deviations
of the copying lines' sample count to reach 10%: a share from a few samples is mostly chance.

## Why is this bad
A deep copy allocates and copies every parameter and buffer, walks the module tree in Python, and
on a GPU may go through the host. An exponential moving average needs one fused in-place update
of the copy it already has; a "best model" needs a copy only when the validation metric improves,
not in every step.

Estimated saving: the line's sampled time per step (measured); an in-place EMA update costs a few fused
kernels (a tenth of it is kept as the update's cost).

## Example
```python
for x, y in loader:
    train_step(x, y)
    ema = copy.deepcopy(model)          # or: best = copy.deepcopy(model.state_dict())
```

## Use instead
```python
ema = torch.optim.swa_utils.AveragedModel(
    model, multi_avg_fn=torch.optim.swa_utils.get_ema_multi_avg_fn(0.999))
for x, y in loader:
    train_step(x, y)
    ema.update_parameters(model)        # in place, fused
```

## Fix safety
Safe for training. An EMA computed in place gives the same average; a "best model" copied only on
improvement is the same model.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import clamp, pct, secs, step_profile
from torchdoctor.diagnose.rules._lines import KINDS, hot_lines, sampled_severity, samples_of

CODE = "D215"
TITLE = "The whole model is copied in every step (EMA or best model kept by a deep copy)"
MIN_SHARE = 0.03
KEPT = 0.1  # the in-place update's cost, as a share of the copy's


def check(run: RunObservation) -> list[Finding]:
    profile = step_profile(run)
    if profile is None:
        return []
    copies = [h for h in hot_lines(run, MIN_SHARE) if h.kind.name == "model_copy"]
    if not copies:
        return []
    share = sum(h.share for h in copies)
    saving = clamp(share * (1 - KEPT))
    evidence = [
        f"{h.line.location} took {pct(h.share)} of the step ({secs(h.share * profile.step_s)}): "
        f"`{h.line.code}`"
        for h in copies[:3]
    ]
    evidence.append("It was sampled inside " + ", ".join(copies[0].line.callees[:3]) + ".")
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity=sampled_severity(saving, sum(samples_of(h) for h in copies)),
            saving=saving,
            evidence=evidence,
            fix=KINDS["model_copy"].fix,
            source="torch.optim.swa_utils.AveragedModel (get_ema_multi_avg_fn); PyTorch "
            "performance tuning guide",
            explanation="A deep copy walks and copies every parameter and buffer; an EMA needs "
            "one in-place update, a best model a copy only when it improves.",
            details={"share": share, "locations": [h.line.location for h in copies]},
            saving_basis="measured",
            saving_how="sampled time of the copying line(s), less a tenth kept for an in-place "
            "update",
        )
    ]
