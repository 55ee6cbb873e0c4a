"""D206: float32 matmuls on an Ampere-or-newer GPU run without TF32.

## What it does
Flags CUDA runs on compute capability 8.0 or newer (A100, RTX 30xx, H100, ...) that train in
float32 without autocast while `torch.backends.cuda.matmul.allow_tf32` is False (PyTorch's
default), when forward and backward take 20% or more of the step.

## Why is this bad
TF32 runs float32 matrix multiplications on tensor cores with a 10-bit mantissa: about 8x the
plain float32 rate on an A100 or H100, with float32 range and accumulation. PyTorch leaves it off
for matmuls by default (cuDNN convolutions already use it), so float32 linear layers and
attention run on the slow path.

Estimated saving (Amdahl's law on the forward+backward share): matmul time, taken as half of it
(a quarter for conv nets, whose convolutions already use TF32), runs 4x faster (a conservative
half of the datasheet ratio). Mixed precision (D204) saves more and supersedes this.

## Example
```python
model = Transformer().cuda()
for x, y in loader:
    loss = criterion(model(x), y)
```

## Use instead
```python
torch.backends.cuda.matmul.allow_tf32 = True  # or torch.set_float32_matmul_precision("high")
torch.backends.cudnn.allow_tf32 = True
model = Transformer().cuda()
```

## Fix safety
Changes numerics: matmul inputs are rounded to a 10-bit mantissa (about 1e-3 relative), which
training tolerates; numerically sensitive code (solvers, some losses) may need full float32.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import (
    MATMUL_SHARE,
    clamp,
    conv_layers,
    on_cuda,
    pct,
    severity_for,
    step_profile,
    uses_autocast,
)
from torchdoctor.diagnose.rules._measured import Saving, measured_or_estimate

CODE = "D206"
TITLE = "TF32 is off for float32 matmuls on an Ampere-or-newer GPU"
MIN_COMPUTE_SHARE = 0.2
TF32_SPEEDUP = 4.0


def check(run: RunObservation) -> list[Finding]:
    profile = step_profile(run)
    env = run.environment
    if profile is None or not on_cuda(run) or env.compute_capability is None:
        return []
    if tuple(env.compute_capability) < (8, 0) or env.tf32_matmul is not False:
        return []
    p = run.precision
    if uses_autocast(run) or p.float32_ops <= 0 or p.float64_ops > p.float32_ops:
        return []
    compute_share = profile.share("forward", "backward")
    if compute_share < MIN_COMPUTE_SHARE:
        return []
    matmul_share = MATMUL_SHARE / 2 if conv_layers(run) and env.tf32_cudnn else MATMUL_SHARE
    estimate = Saving(
        clamp(compute_share * matmul_share * (1 - 1 / TF32_SPEEDUP)),
        "estimated",
        f"assumes {pct(matmul_share)} of forward and backward is matmul time, "
        f"{TF32_SPEEDUP:g}x faster in TF32",
    )
    found = measured_or_estimate(run, "cuda.tf32", compute_share, estimate, "forward and backward")
    if found is None:
        return []  # measured no faster on this GPU and model: nothing to claim
    saving = found.fraction
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity=severity_for(saving),
            saving=saving,
            evidence=[
                f"{env.device_name or 'The GPU'} (compute capability {env.compute_capability}) "
                "supports TF32, but torch.backends.cuda.matmul.allow_tf32 was False.",
                f"{p.float32_ops:g} float32 matmul/conv ops per step ran without autocast.",
                f"Forward and backward took {pct(compute_share)} of the step.",
                *found.evidence,
            ],
            fix='torch.set_float32_matmul_precision("high")  # TF32 for float32 matmuls\n'
            "torch.backends.cudnn.allow_tf32 = True",
            source="docs/techniques/cudnn-benchmark-and-tf32.md; PyTorch docs: CUDA semantics "
            "(TensorFloat-32 on Ampere and later)",
            explanation="TF32 runs float32 matmuls on tensor cores several times faster; PyTorch "
            "leaves it off for matmuls by default.",
            details={"compute_share": compute_share, "matmul_share": matmul_share},
            saving_basis=found.basis,
            saving_how=found.how,
        )
    ]
