"""D204: training runs in float32 without autocast where half precision is faster.

## What it does
Flags CUDA runs on a GPU with tensor cores (compute capability 7.0 or newer) where most training
forwards ran outside `torch.autocast` and no compute ran in float16/bfloat16, when forward and
backward take 20% or more of the step. On a CPU it flags the same float32 training only when the
what-if probe measured the model's forward and backward faster under bf16 autocast (CPUs with
AMX or AVX-512 BF16 run bf16 matmuls natively).

## Why is this bad
Tensor cores run bf16/fp16 matrix multiplications many times faster than float32 (about 15x on an
A100 or H100, 2x against TF32), and half-precision activations halve the bytes every other op
moves. Autocast picks the precision per op, keeping reductions and losses in float32.

Estimated saving (Amdahl's law on the forward+backward share `c`): half of it is assumed to be
matmul/conv time, sped up 8x from plain float32 (a conservative half of the datasheet ratio) or 2x
from TF32; the other half moves half the bytes, of which we count 30%.

Measured saving: after the run the what-if probe times forward and backward of a deep copy of the
model on the real batch it last trained on, in float32 and under `torch.autocast` (bf16 on a CPU;
bf16, or fp16 on a GPU without bf16), interleaved; the saving is the forward and backward share of
the step times the measured relative gain (the seconds saved are a share of the steps as
they ran: the typical step's plus the input waits the measured steps had beyond its own where the
training loader has workers, an epoch's start-up of respawned workers, which bf16 does not
shorten). When autocast measures no faster, nothing is reported,
on a GPU too: most CPUs without native bf16 run it slower than float32 (emulated conversions),
and a suggestion that would slow the user's own program down is noise, not advice; the timing stays
in the JSON report (`run.whatif`). A CPU run is never flagged on the estimate alone, nor when
bf16 measured less than 20% faster on forward and backward (not worth the coarser numerics). On an
x86 CPU without AVX512-BF16 or AMX the probe is not run at all: emulated bf16 measured 1.7-2.3x
slower than float32 there, so its share of the probes' budget goes to the others.

On a CPU the finding is information, ranked after the warnings and errors: bf16 keeps 8 bits of
mantissa where float32 keeps 24, and on a CPU, unlike a GPU with tensor cores, training in it is
not the common practice a speed-up alone justifies. Whether the loss curve stays the same is the
user's call, with `--try autocast`'s loss check in hand.

## Example
```python
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
```

## Use instead
```python
for x, y in loader:
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
```

## Fix safety
Changes numerics, not the model: bf16 needs no loss scaling. With float16 (GPUs without bf16) add
`torch.amp.GradScaler("cuda")` and unscale before clipping (see D209). Check that the loss curve
matches a float32 run.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import (
    MATMUL_SHARE,
    clamp,
    on_cuda,
    over_profile_input_waits,
    pct,
    severity_for,
    step_profile,
    uses_autocast,
)
from torchdoctor.diagnose.rules._measured import Saving, fastest, measured_or_estimate

CODE = "D204"
TITLE = "No mixed precision (autocast) where half precision is faster"
MIN_COMPUTE_SHARE = 0.2
SPEEDUP_FROM_FP32 = 8.0
SPEEDUP_FROM_TF32 = 2.0
ELEMENTWISE_GAIN = 0.3
MIN_CPU_GAIN = 0.2  # of forward and backward: a CPU finding needs bf16 measured this much faster


def estimated_saving(compute_share: float, tf32: bool) -> float:
    speedup = SPEEDUP_FROM_TF32 if tf32 else SPEEDUP_FROM_FP32
    gain = MATMUL_SHARE * (1 - 1 / speedup) + (1 - MATMUL_SHARE) * ELEMENTWISE_GAIN
    return clamp(compute_share * gain)


def check(run: RunObservation) -> list[Finding]:
    profile = step_profile(run)
    env = run.environment
    if profile is None or uses_autocast(run):
        return []
    if on_cuda(run) and not env.tensor_cores:
        return []
    if run.precision.low_precision_ops > 0 or run.precision.float64_ops > run.precision.float32_ops:
        return []
    compute_share = profile.share("forward", "backward")
    if compute_share < MIN_COMPUTE_SHARE:
        return []
    estimate = Saving(
        estimated_saving(compute_share, bool(env.tf32_matmul)),
        "estimated",
        "assumes half the forward and backward is matmul time "
        f"{SPEEDUP_FROM_TF32 if env.tf32_matmul else SPEEDUP_FROM_FP32:g}x faster, the rest "
        f"{pct(ELEMENTWISE_GAIN)} faster",
    )
    found = measured_or_estimate(
        run, "precision.autocast", compute_share, estimate, "forward and backward"
    )
    if found is None or (not on_cuda(run) and found.basis != "measured"):
        return []  # measured no faster; or a CPU, where only a measurement can tell
    # the typical step's seconds over the steps as run: bf16 shortens none of the input waits
    # the profile left out as rare (an epoch's start-up of respawned workers)
    saving = over_profile_input_waits(run, profile, found.fraction)
    measured = fastest(run, "precision.autocast") if found.basis == "measured" else None
    if not on_cuda(run) and measured is not None and measured.ratio > 1 - MIN_CPU_GAIN:
        return []  # a few percent is not worth bf16 numerics on a CPU
    if measured is not None:
        dtype = "torch." + measured.name.rsplit(".", 1)[1]
    else:
        dtype = "torch.bfloat16" if env.bf16_supported else "torch.float16"
    device = "cuda" if on_cuda(run) else "cpu"
    # bf16 on a CPU is a numerics choice for the user to check, not a problem to fix: see above
    numerics_choice = device == "cpu"
    fix = f'with torch.autocast("{device}", dtype={dtype}):\n    loss = criterion(model(x), y)'
    if dtype == "torch.float16" and device == "cuda":
        fix += (
            '\nscaler = torch.amp.GradScaler("cuda")  # float16 needs loss scaling\n'
            "scaler.scale(loss).backward(); scaler.step(optimizer); scaler.update()"
        )
    p = run.precision
    hardware = (
        f"{env.device_name or 'The GPU'} has tensor cores (compute capability "
        f"{env.compute_capability})."
        if on_cuda(run)
        else "On this CPU bf16 autocast measured faster than float32."
    )
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity="info" if numerics_choice else severity_for(saving),
            saving=saving,
            evidence=[
                hardware,
                f"{p.autocast_forwards} of {p.forwards} training forwards ran under autocast; "
                f"{p.float32_ops:g} float32 and {p.low_precision_ops:g} fp16/bf16 compute ops "
                "per step.",
                f"Forward and backward took {pct(compute_share)} of the step.",
                *found.evidence,
            ],
            fix=fix,
            source="docs/techniques/mixed-precision.md; PyTorch docs: Automatic Mixed Precision "
            "package - torch.amp",
            explanation="Half-precision matmuls run far faster on hardware built for them, and "
            "half-precision activations halve memory traffic.",
            details={
                "compute_share": compute_share,
                "tf32_matmul": env.tf32_matmul,
                "bf16_supported": env.bf16_supported,
            },
            saving_basis=found.basis,
            saving_how=found.how,
            changes_semantics=numerics_choice,
        )
    ]
