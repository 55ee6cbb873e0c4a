"""D104: a CUDA run's DataLoader returns batches in pageable memory (pin_memory=False).

## What it does
Flags a training `DataLoader` with `pin_memory=False` in a run on a CUDA device when copying
batches to the GPU takes a measurable share (1% or more) of the step.

## Why is this bad
A copy from pageable host memory is staged by the driver through a pinned buffer, so it runs at
about half the bandwidth and always blocks the host. With `pin_memory=True` the loader's pinning
thread puts batches in page-locked memory, and `.to(device, non_blocking=True)` can then return at
once.

Estimated saving: half of the measured host-to-device copy time per step.

Measured saving: after the run the what-if probe copies the batch the model last trained on to
the GPU from pageable memory, blocking, and from pinned memory with `non_blocking=True` (the
pinning itself runs in the loader's thread, beside the step), each followed by forward and
backward of a copy of the model, interleaved; the saving is the share of those phases it saved,
at most the copy time itself. Measured no faster: nothing is reported.

## Example
```python
loader = DataLoader(dataset, batch_size=256, num_workers=8)
for x, y in loader:
    x, y = x.to("cuda"), y.to("cuda")
```

## Use instead
```python
loader = DataLoader(dataset, batch_size=256, num_workers=8, pin_memory=True)
for x, y in loader:
    x, y = x.to("cuda", non_blocking=True), y.to("cuda", non_blocking=True)
```

## Fix safety
Safe: the values are unchanged. Pinned memory is page-locked; very large pinned batches reduce
the memory the OS can page, so keep `prefetch_factor * num_workers` batches within reason.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import (
    PINNED_COPY_SAVING,
    clamp,
    on_cuda,
    pct,
    secs,
    severity_for,
    step_profile,
    training_loaders,
)
from torchdoctor.diagnose.rules._loader_call import rewrite_call
from torchdoctor.diagnose.rules._measured import Saving, copy_saving

CODE = "D104"
TITLE = "DataLoader does not pin memory on a CUDA run (pin_memory=False)"
MIN_H2D_SHARE = 0.01


def check(run: RunObservation) -> list[Finding]:
    profile = step_profile(run)
    if profile is None or not on_cuda(run):
        return []
    unpinned = [ld for ld in training_loaders(run) if not ld.pin_memory]
    h2d_share = profile.share("h2d")
    if not unpinned or h2d_share < MIN_H2D_SHARE:
        return []
    loader = unpinned[0]
    estimate = Saving(
        clamp(h2d_share * PINNED_COPY_SAVING),
        "estimated",
        f"estimate: half the copy time measured per step ({secs(profile.seconds('h2d'))}): "
        "pinned copies run at about twice the bandwidth, non-blocking ones overlap",
    )
    saving = copy_saving(run, "pin_memory", estimate)
    if saving is None:
        return []
    evidence = [
        f"Copying batches to the GPU took {pct(h2d_share)} of each step "
        f"({secs(profile.seconds('h2d'))} of {secs(profile.step_s)}).",
        f"The DataLoader at {loader.location} has pin_memory=False.",
    ]
    if run.transfers.pinned_fraction is not None:
        evidence.append(
            f"{pct(run.transfers.pinned_fraction)} of the bytes copied to the GPU came from "
            "pinned memory."
        )
    evidence += saving.evidence
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity=severity_for(saving.fraction),
            saving=saving.fraction,
            evidence=evidence,
            fix=(
                f"loader = {rewrite_call(loader, {'pin_memory': 'True'})}\n"
                "x = x.to(device, non_blocking=True)"
            ),
            source="docs/techniques/pinned-memory-non-blocking.md; PyTorch docs: torch.utils.data "
            "(memory pinning)",
            explanation="Pageable batches are copied at about half speed and block the host; "
            "pinned batches copy faster and can overlap the step.",
            details={"h2d_share": h2d_share, "location": loader.location},
            saving_basis=saving.basis,
            saving_how=saving.how,
        )
    ]
