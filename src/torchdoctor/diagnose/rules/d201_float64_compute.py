"""D201: the model computes in float64.

## What it does
Flags runs where matrix multiplications and convolutions run in float64 (double precision), or
where the model's parameters are float64, when those ops make up 10% or more of the compute ops.

## Why is this bad
Neural networks train fine in float32 (or lower). Float64 halves the SIMD width on CPUs and the
memory bandwidth everywhere, and GPUs run it at a fraction of their float32 rate (1/64 on consumer
cards, no tensor-core TF32/bf16 path). It usually slips in through NumPy, whose default dtype is
float64: `torch.from_numpy(np.random.rand(...))`, `img / 255.` on an array, or `model.double()`;
or through `torch.set_default_dtype(torch.float64)`, which the evidence names when it is set.

Measured saving: after the run the what-if probe times forward and backward of a deep copy of the
model on the real batch it last trained on, as run (float64) and as a float32 copy on float32
inputs, interleaved; the saving is the forward and backward share of the step times the measured
relative gain, plus the optimizer step's share times its measured gain on a float32 clone of its
parameters, gradients and state; as a share of the run (training steps plus evaluation), plus,
where the program evaluates, the evaluation forwards' share of the run times the gain measured on
an evaluation forward of the float64 copy vs the float32 one (eval mode, the program's grad mode,
at the evaluation's batch size), since the fix makes the evaluation float32 too. When float32
measures no faster, nothing is reported.

Estimated saving, without that measurement (over the probes' time budget, a model that cannot be
copied): float32 work runs at least twice as fast (half the bytes, twice the SIMD lanes), so half
the compute share of the step, scaled by the float64 share of compute ops, and never more than
forward plus backward; the evaluation forwards' share of the run alike.

## Example
```python
x = torch.from_numpy(features)  # features is a float64 ndarray
model = model.double()
```

## Use instead
```python
x = torch.from_numpy(features).float()  # or features.astype(np.float32)
model = model.float()
```

## Fix safety
Changes numerics at the level of float32 rounding (about 1e-7 relative), which training tolerates;
code that truly needs double precision (some scientific losses) should keep it for those ops only.
"""

from __future__ import annotations

from dataclasses import replace

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import (
    COMPUTE_PHASES,
    clamp,
    pct,
    severity_for,
    step_profile,
    training_share,
)
from torchdoctor.diagnose.rules._measured import Saving, how, measured_or_estimate, timings

CODE = "D201"
SAVING_OF = "run"  # the fix makes training and evaluation float32: a share of both
FLOAT32_EVALUATION = "precision.float32_evaluation"  # whatif/precision.py's name
TITLE = "Compute runs in float64"
MIN_FLOAT64_SHARE = 0.10
FLOAT32_SPEEDUP = 2.0
FLOAT32_FIX = (
    "model = model.float()\nx = torch.from_numpy(array).float()  # NumPy arrays default to float64"
)
# with the default dtype left at float64, model.float() alone leaves every new tensor float64
# (and then mismatches the model): the cause has to go
DEFAULT_DTYPE_FIX = (
    "torch.set_default_dtype(torch.float32)  # or remove set_default_dtype(torch.float64)\n"
    "x = torch.from_numpy(array).float()  # NumPy arrays default to float64"
)


def float64_share(run: RunObservation) -> float | None:
    """Share of the compute ops (else of the parameters) in float64; None under the threshold."""
    p = run.precision
    total_ops = p.float64_ops + p.float32_ops + p.low_precision_ops
    f64_params = sum(m.parameter_dtypes.get("float64", 0) for m in run.models)
    all_params = sum(sum(m.parameter_dtypes.values()) for m in run.models)
    if total_ops > 0:
        share = p.float64_ops / total_ops
    elif all_params > 0:
        share = f64_params / all_params
    else:
        return None
    return share if share >= MIN_FLOAT64_SHARE else None


def _with_evaluation(run: RunObservation, training: Saving, f64_share: float) -> Saving:
    """`training` (a share of the step) as a share of the run, plus what float32 gives back in
    the evaluation forwards the fix makes float32 too: their share of the run times the gain the
    what-if timed on an evaluation forward of float64 vs float32 copies (an estimate where the
    training saving is one; not counted where only the training step was timed)."""
    ev = run.evaluation
    trained = training_share(run)
    on_run = training.fraction * trained
    # the run's scale, as rules_runner's: the evaluation cut out of the measured steps
    forwards = (1 - trained) * (
        clamp(ev.forward_seconds / ev.seconds) if ev.seconds > 0 and ev.forward_seconds > 0 else 1
    )
    if ev.forwards <= 0 or forwards <= 0:
        return replace(training, fraction=on_run)
    measured = next(iter(timings(run, FLOAT32_EVALUATION)), None)
    if training.basis == "estimated":
        gain = forwards * f64_share * (1 - 1 / FLOAT32_SPEEDUP)
        return Saving(clamp(on_run + gain), "estimated", training.how + ", evaluation alike")
    if measured is None:
        return Saving(on_run, "measured", training.how + "; the evaluation was not timed")
    gain = forwards * max(0.0, 1 - measured.ratio)
    return Saving(
        clamp(on_run + gain),
        "measured",
        f"{training.how}; {how(measured, 'an evaluation forward')}",
    )


def check(run: RunObservation) -> list[Finding]:
    profile = step_profile(run)
    f64_share = float64_share(run)
    if profile is None or f64_share is None:
        return []
    p = run.precision
    total_ops = p.float64_ops + p.float32_ops + p.low_precision_ops
    f64_params = sum(m.parameter_dtypes.get("float64", 0) for m in run.models)
    all_params = sum(sum(m.parameter_dtypes.values()) for m in run.models)
    compute_share = profile.share(*COMPUTE_PHASES)
    # an estimate claims forward and backward time at most; a measurement adds the optimizer
    # step when it was timed on float32 clones too
    model_share = profile.share("forward", "backward")
    estimate = Saving(
        min(clamp(compute_share * f64_share * (1 - 1 / FLOAT32_SPEEDUP)), model_share),
        "estimated",
        f"assumes float32 {FLOAT32_SPEEDUP:g}x faster on the float64 share of forward, "
        "backward and optimizer",
    )
    found = measured_or_estimate(
        run, "precision.float32", model_share, estimate, "forward and backward"
    )
    slower = found is None  # forward and backward measured no faster in float32
    if found is None:  # the evaluation forward may still be, at a larger batch
        found = Saving(0.0, "measured", "forward and backward measured no faster in float32")
    optimizer = next(iter(timings(run, "precision.float32_optimizer")), None)
    if not slower and found.basis == "measured" and optimizer is not None and optimizer.ratio < 1:
        found = Saving(
            clamp(found.fraction + profile.share("optimizer") * (1 - optimizer.ratio)),
            "measured",
            f"{found.how}; {how(optimizer, 'the optimizer step')}",
        )
    found = _with_evaluation(run, found, f64_share)
    if found.basis == "measured" and found.fraction <= 0:
        return []  # float32 measured no faster on this program: nothing to claim
    saving = found.fraction
    evidence = []
    if total_ops > 0:
        evidence.append(
            f"{p.float64_ops:g} of {total_ops:g} matmul/conv ops per step ran in float64 "
            f"({pct(f64_share)})."
        )
    if f64_params:
        evidence.append(f"{f64_params:,} of {all_params:,} model parameters are float64.")
    evidence.append(f"Forward, backward and optimizer took {pct(compute_share)} of the step.")
    evidence += found.evidence
    fix = FLOAT32_FIX
    if run.environment.default_dtype == "float64":
        evidence.append(
            "torch.get_default_dtype() is float64: torch.set_default_dtype(torch."
            "float64) makes every new tensor and layer float64."
        )
        fix = DEFAULT_DTYPE_FIX
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity=severity_for(saving),
            saving=saving,
            evidence=evidence,
            fix=fix,
            source="docs/techniques/tensor-creation.md; PyTorch docs: torch.set_default_dtype",
            explanation="Float64 runs at half the float32 rate or worse and moves twice the "
            "bytes; training does not need it.",
            details={
                "float64_share": f64_share,
                "compute_share": compute_share,
                "float64_parameters": f64_params,
                "default_dtype": run.environment.default_dtype,
            },
            saving_basis=found.basis,
            saving_how=found.how,
        )
    ]
