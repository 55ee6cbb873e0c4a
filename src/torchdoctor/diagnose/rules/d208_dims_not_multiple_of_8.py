"""D208: layer sizes are not multiples of 8 under mixed precision.

## What it does
Flags CUDA runs under autocast whose Linear/Conv layers have input or output sizes that are not
multiples of 8, listing the layers.

## Why is this bad
Tensor cores work on tiles of 8 (fp16/bf16) elements; a matmul with a dimension of, say, 100 is
padded internally or falls back to slower kernels. Sizes that are multiples of 8 (better: of 64)
keep every tile full.

Estimated saving: 10% of the matmul time (taken as half of forward+backward). It is a rough
guide, so the finding is reported as information.

Measured saving: after the run the what-if probe times the unaligned `nn.Linear` calls of one
replayed forward (fresh layers of the same sizes, on inputs of the shapes they saw, forward and
backward under the program's autocast) against the same calls padded to multiples of 8,
interleaved; the saving is the seconds saved per step, at most forward and backward. Measured no
faster: nothing is reported. Convolutions are not timed (their estimate stands in).

## Example
```python
model = nn.Sequential(nn.Linear(1000, 100), nn.ReLU(), nn.Linear(100, 10))
```

## Use instead
```python
model = nn.Sequential(nn.Linear(1000, 128), nn.ReLU(), nn.Linear(128, 16))  # pad the outputs
```

## Fix safety
Changes semantics: it changes the architecture (hidden sizes, vocabulary or class padding), so it
is a suggestion; padded output classes must be masked out of the loss.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding, SavingBasis
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import (
    clamp,
    kernel_gain_saving,
    on_cuda,
    pct,
    step_profile,
    uses_autocast,
)
from torchdoctor.diagnose.rules._measured import fastest, how

CODE = "D208"
TITLE = "Layer sizes not multiples of 8 under mixed precision"
PADDING_GAIN = 0.10


def check(run: RunObservation) -> list[Finding]:
    profile = step_profile(run)
    if profile is None or not on_cuda(run) or not uses_autocast(run):
        return []
    layers = [d for m in run.models for d in m.dims_not_multiple_of_8]
    if not layers:
        return []
    compute_share = profile.share("forward", "backward")
    saving = kernel_gain_saving(compute_share, PADDING_GAIN)
    basis: SavingBasis = "estimated"
    saving_how = (
        f"estimate: assumes padded sizes make the matmuls (taken as half of forward and "
        f"backward, {pct(compute_share)} of the step) {pct(PADDING_GAIN)} faster"
    )
    measured = fastest(run, "dims.padded_to_8")
    if measured is not None:
        if measured.ratio >= 1:
            return []  # the padded layers measured no faster on this GPU
        saved_s = measured.as_run_s - measured.alternative_s  # per step: the calls of one step
        saving = min(clamp(saved_s / profile.step_s), compute_share)
        basis, saving_how = "measured", how(measured, "the unaligned Linear calls")
    shown = ", ".join(layers[:4]) + (f" and {len(layers) - 4} more" if len(layers) > 4 else "")
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity="info",
            saving=saving,
            evidence=[
                f"{len(layers)} layer(s) have sizes that are not multiples of 8: {shown}.",
                f"Forward and backward took {pct(compute_share)} of the step under autocast.",
            ]
            + ([f"Measured: {saving_how}."] if basis == "measured" else []),
            fix="# round hidden sizes up to a multiple of 8 (64 is better), e.g.\n"
            "nn.Linear(1000, 128)  # instead of nn.Linear(1000, 100)",
            source="docs/techniques/dims-multiple-of-8.md",
            explanation="Tensor cores compute in tiles of 8; other sizes leave tiles partly "
            "empty or use slower kernels.",
            changes_semantics=True,
            details={"layers": layers},
            saving_basis=basis,
            saving_how=saving_how,
        )
    ]
