"""D205: a convolutional net with fixed input shapes runs without cudnn.benchmark.

## What it does
Flags CUDA runs of a model with convolution layers whose training batches all had the same
shapes, while `torch.backends.cudnn.benchmark` is False.

## Why is this bad
Without benchmarking, cuDNN picks a convolution algorithm by heuristics. With
`cudnn.benchmark = True` it times the candidate algorithms once per input shape and keeps the
fastest, which pays off whenever shapes repeat.

Estimated saving: 10% of the convolution time, which is taken as half of forward+backward (the
autotuned algorithm is commonly 5-20% faster than the heuristic choice).

## Example
```python
model = ResNet().cuda()
for x, y in loader:  # every batch is 64x3x224x224
    ...
```

## Use instead
```python
torch.backends.cudnn.benchmark = True  # before the training loop
model = ResNet().cuda()
```

## Fix safety
Safe for the values, but algorithms may differ run to run (use
`torch.backends.cudnn.deterministic = True` when bit-reproducibility matters). With input shapes
that keep changing it re-benchmarks every new shape and can be slower: keep it off then.
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
)
from torchdoctor.diagnose.rules._measured import kernel_gain_or_measured

CODE = "D205"
TITLE = "cudnn.benchmark is off for a conv net with fixed input shapes"
AUTOTUNE_GAIN = 0.10


def check(run: RunObservation) -> list[Finding]:
    profile = step_profile(run)
    env = run.environment
    convs = conv_layers(run)
    if profile is None or not on_cuda(run) or convs == 0:
        return []
    if env.cudnn_benchmark is not False or env.input_shapes_fixed is not True:
        return []
    compute_share = profile.share("forward", "backward")
    found = kernel_gain_or_measured(
        run, "cuda.cudnn_benchmark", compute_share, AUTOTUNE_GAIN, "cuDNN's tuned kernels"
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
                f"The model has {convs} convolution layer(s) and every training batch had the "
                "same shapes.",
                "torch.backends.cudnn.benchmark was False.",
                f"Forward and backward took {pct(compute_share)} of the step.",
                *found.evidence,
            ],
            fix="torch.backends.cudnn.benchmark = True  # before the training loop",
            source="docs/techniques/cudnn-benchmark-and-tf32.md; PyTorch docs: Performance Tuning "
            "Guide (enable cuDNN auto-tuner)",
            explanation="cuDNN picks convolution algorithms by heuristics; benchmarking once per "
            "shape finds the fastest.",
            details={"conv_layers": convs, "compute_share": compute_share},
            saving_basis=found.basis,
            saving_how=found.how,
        )
    ]
