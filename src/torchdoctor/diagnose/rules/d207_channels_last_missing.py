"""D207: a conv net under mixed precision runs in NCHW (channels_first) layout.

## What it does
Flags CUDA runs of a model with convolution layers that trains under autocast while the
convolution inputs are not in `torch.channels_last` memory format.

## Why is this bad
Tensor-core convolutions in cuDNN work in NHWC. With NCHW tensors, cuDNN transposes inputs and
outputs around every convolution, which costs memory traffic that is large relative to the fast
half-precision convolution itself.

Estimated saving: 20% of the convolution time (NVIDIA reports 10-30% for NHWC under AMP), with
convolutions taken as half of forward+backward.

## Example
```python
model = ResNet().cuda()
for x, y in loader:
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = criterion(model(x.cuda()), y.cuda())
```

## Use instead
```python
model = ResNet().cuda().to(memory_format=torch.channels_last)
for x, y in loader:
    x = x.cuda(non_blocking=True).to(memory_format=torch.channels_last)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = criterion(model(x), y.cuda())
```

## Fix safety
Safe: values are unchanged, only the memory layout. Code that calls `.view()` on conv activations
may need `.reshape()` instead.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import (
    conv_layers,
    on_cuda,
    pct,
    severity_for,
    step_profile,
    uses_autocast,
)
from torchdoctor.diagnose.rules._measured import kernel_gain_or_measured

CODE = "D207"
TITLE = "Conv net under mixed precision without channels_last"
NHWC_GAIN = 0.2


def check(run: RunObservation) -> list[Finding]:
    profile = step_profile(run)
    convs = conv_layers(run)
    if profile is None or not on_cuda(run) or convs == 0 or not uses_autocast(run):
        return []
    if not any(m.conv_layers and m.conv_channels_last_inputs is False for m in run.models):
        return []
    compute_share = profile.share("forward", "backward")
    found = kernel_gain_or_measured(
        run, "cuda.channels_last", compute_share, NHWC_GAIN, "NHWC kernels"
    )
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
                f"The model has {convs} convolution layer(s) and trains under autocast "
                f"({run.precision.autocast_dtype or 'half precision'}).",
                "Convolution inputs were in NCHW (contiguous) layout, not channels_last.",
                f"Forward and backward took {pct(compute_share)} of the step.",
                *found.evidence,
            ],
            fix="model = model.to(memory_format=torch.channels_last)\n"
            "x = x.to(device, non_blocking=True).to(memory_format=torch.channels_last)",
            source="docs/techniques/channels-last.md; PyTorch tutorial: Channels Last Memory "
            "Format",
            explanation="Half-precision tensor-core convolutions work in NHWC; NCHW inputs are "
            "transposed around every convolution.",
            details={"conv_layers": convs, "compute_share": compute_share},
            saving_basis=found.basis,
            saving_how=found.how,
        )
    ]
