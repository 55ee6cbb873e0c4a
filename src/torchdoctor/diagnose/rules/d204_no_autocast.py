"""D204: a tensor-core GPU trains in float32 without autocast.

## What it does
Flags CUDA runs on a GPU with tensor cores (compute capability 7.0 or newer) where most training
forwards ran outside `torch.autocast` and no compute ran in float16/bfloat16, when forward and
backward take 20% or more of the step.

## Why is this bad
Tensor cores run bf16/fp16 matrix multiplications many times faster than float32 (about 15x on an
A100 or H100, 2x against TF32), and half-precision activations halve the bytes every other op
moves. Autocast picks the precision per op, keeping reductions and losses in float32.

Estimated saving (Amdahl's law on the forward+backward share `c`): half of it is assumed to be
matmul/conv time, sped up 8x from plain float32 (a conservative half of the datasheet ratio) or 2x
from TF32; the other half moves half the bytes, of which we count 30%.

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
    pct,
    severity_for,
    step_profile,
    uses_autocast,
)

CODE = "D204"
TITLE = "No mixed precision (autocast) on a tensor-core GPU"
MIN_COMPUTE_SHARE = 0.2
SPEEDUP_FROM_FP32 = 8.0
SPEEDUP_FROM_TF32 = 2.0
ELEMENTWISE_GAIN = 0.3


def estimated_saving(compute_share: float, tf32: bool) -> float:
    speedup = SPEEDUP_FROM_TF32 if tf32 else SPEEDUP_FROM_FP32
    gain = MATMUL_SHARE * (1 - 1 / speedup) + (1 - MATMUL_SHARE) * ELEMENTWISE_GAIN
    return clamp(compute_share * gain)


def check(run: RunObservation) -> list[Finding]:
    profile = step_profile(run)
    env = run.environment
    if profile is None or not on_cuda(run) or not env.tensor_cores or uses_autocast(run):
        return []
    if run.precision.low_precision_ops > 0 or run.precision.float64_ops > run.precision.float32_ops:
        return []
    compute_share = profile.share("forward", "backward")
    if compute_share < MIN_COMPUTE_SHARE:
        return []
    saving = estimated_saving(compute_share, bool(env.tf32_matmul))
    dtype = "torch.bfloat16" if env.bf16_supported else "torch.float16"
    fix = f'with torch.autocast("cuda", dtype={dtype}):\n    loss = criterion(model(x), y)'
    if not env.bf16_supported:
        fix += (
            '\nscaler = torch.amp.GradScaler("cuda")  # float16 needs loss scaling\n'
            "scaler.scale(loss).backward(); scaler.step(optimizer); scaler.update()"
        )
    p = run.precision
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity=severity_for(saving),
            saving=saving,
            evidence=[
                f"{env.device_name or 'The GPU'} has tensor cores (compute capability "
                f"{env.compute_capability}).",
                f"{p.autocast_forwards} of {p.forwards} training forwards ran under autocast; "
                f"{p.float32_ops:g} float32 and {p.low_precision_ops:g} fp16/bf16 compute ops "
                "per step.",
                f"Forward and backward took {pct(compute_share)} of the step.",
            ],
            fix=fix,
            source="docs/techniques/mixed-precision.md; PyTorch docs: Automatic Mixed Precision "
            "package - torch.amp",
            explanation="Tensor cores run half-precision matmuls far faster than float32, and "
            "half-precision activations halve memory traffic.",
            details={
                "compute_share": compute_share,
                "tf32_matmul": env.tf32_matmul,
                "bf16_supported": env.bf16_supported,
            },
        )
    ]
