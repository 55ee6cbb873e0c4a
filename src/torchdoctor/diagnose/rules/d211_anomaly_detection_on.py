"""D211: autograd anomaly detection is left on during training.

## What it does
Flags a run in which `torch.autograd` anomaly detection was enabled during the measured training
steps (`torch.autograd.set_detect_anomaly(True)` or a `with torch.autograd.detect_anomaly():`
around the loop), as seen by `torch.is_anomaly_enabled()` at the end of each step.

## Why is this bad
Anomaly detection is a debugging mode: every forward op records a Python traceback, and every
backward node checks its outputs for NaN (on a GPU, a host-device sync per node). It finds where a
NaN first appears, and costs time in every step it is left on.

Measured saving: after the run the what-if probe times forward and backward of a copy of the
model on its real batch with anomaly detection on and off, interleaved; the saving is the forward
and backward share of the step times the measured gain, and the loop's other ops (the loss
computed outside the model records its tracebacks too) at the same gain, at most nine tenths of
them. The seconds saved are a share of the steps
as they ran: the typical step's plus the input
waits the measured steps had beyond its own where the training loader has workers (an
epoch's start-up of respawned workers, left out of the typical step as a rare slow one). Estimated
saving, without that
measurement: when the mode was already on at the end of the warm-up step before the sampled one,
a small forward+backward is timed there and before the program started, and the extra time per
op, times the ops of a step, is the mode's cost (at most nine tenths of the forward and
backward time); else a documented factor: training steps of small CPU MLPs ran 1.2x (1024 wide,
batch 256) to 3.8x (64 wide, batch 32) slower with it on, one thread, torch 2.13; the saving assumes
the lowest, 1.2x, on forward and
backward time: a sixth of it. Small models and GPUs (one sync per node) lose more.

## Example
```python
torch.autograd.set_detect_anomaly(True)  # left on after hunting a NaN
for x, y in loader:
    loss = loss_fn(model(x), y)
    loss.backward()
```

## Use instead
```python
# turn it on only to locate a NaN, for the few steps that produce it
debug = os.environ.get("DETECT_ANOMALY") == "1"
torch.autograd.set_detect_anomaly(debug)
for x, y in loader:
    loss = loss_fn(model(x), y)
    loss.backward()
```

## Fix safety
Safe: results are unchanged; only the NaN traceback that the mode would print is lost.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding, SavingBasis
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import (
    clamp,
    over_profile_input_waits,
    pct,
    secs,
    step_profile,
)
from torchdoctor.diagnose.rules._debug_modes import (
    PER_OP_RULES_SILENT,
    measured_on_copy,
    mode_cost_share,
)

CODE = "D211"
TITLE = "Autograd anomaly detection left on (a debugging mode that slows every step)"
# Smallest step slowdown measured with anomaly detection on (see the docstring).
ANOMALY_SLOWDOWN = 1.2


def check(run: RunObservation) -> list[Finding]:
    profile = step_profile(run)
    if profile is None or not run.environment.anomaly_detection:
        return []
    autograd_share = profile.share("forward", "backward")
    saving = clamp(autograd_share * (1 - 1 / ANOMALY_SLOWDOWN))
    evidence = [
        "torch.is_anomaly_enabled() was True at the end of the measured training steps.",
        f"Forward and backward took {pct(autograd_share)} of the step; anomaly mode "
        f"makes them at least {ANOMALY_SLOWDOWN:g}x slower (about {pct(saving)} of the "
        "step).",
    ]
    basis: SavingBasis = "estimated"
    saving_how = f"assumes forward and backward {ANOMALY_SLOWDOWN:g}x slower with it on"
    overhead = run.habits.anomaly_op_overhead_s
    # anomaly mode's work is in the forward (a traceback per op) and the backward (NaN checks)
    cost = mode_cost_share(run, profile, overhead, ("forward", "backward"))
    # loop_ops: the loss the loop computes outside the model records a traceback per op too
    # (its forward is in the "other" phase): d211 stated 40-60% over forward and backward
    # alone, where `--try anomaly_off` gained 68%, the "other" phase 15% of the step
    measured = measured_on_copy(run, profile, "anomaly", "anomaly mode", loop_ops=True)
    if measured is not None:  # timed on a copy of the model, on and off, interleaved
        saving, evidence[1], saving_how = measured
        basis = "measured"
    elif cost is not None:
        saving, seconds = cost
        evidence[1] = (
            f"With it on, an op took {secs(overhead or 0.0)} longer (measured on a benchmark); x "
            f"{run.compute.ops_per_step:.0f} ops per step = {secs(seconds)}, about "
            f"{pct(saving)} of the step ({secs(profile.step_s)})."
        )
        saving_how = (
            "extra time per op with anomaly mode on (measured on a benchmark) x ops per step"
        )
    evidence.append(PER_OP_RULES_SILENT)
    # the typical step's seconds over the steps as run: anomaly mode slows none of the input
    # waits the profile left out as rare (an epoch's start-up of respawned workers)
    saving = over_profile_input_waits(run, profile, saving)
    return [
        Finding(
            id=CODE,
            title=TITLE,
            # a debugging mode has no place in a training run, whatever it costs this one
            severity="warning",
            saving=saving,
            evidence=evidence,
            fix="torch.autograd.set_detect_anomaly(False)  # or remove the call / the "
            "`with torch.autograd.detect_anomaly():` block",
            source="PyTorch docs (torch.autograd.detect_anomaly: 'should be enabled only for "
            "debugging as the different tests will slow down your program execution'); "
            "PyTorch performance tuning guide",
            explanation="Anomaly mode records a traceback per op and checks every backward "
            "output for NaN; it is for locating a NaN, not for training.",
            details={"autograd_share": autograd_share, "slowdown_assumed": ANOMALY_SLOWDOWN},
            saving_basis=basis,
            saving_how=saving_how,
        )
    ]
