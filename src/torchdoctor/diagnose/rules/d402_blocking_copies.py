"""D402: host-to-device copies are blocking or come from pageable memory.

## What it does
Flags CUDA runs where copying to the GPU takes 5% or more of the step and the copies are either
made from pinned memory without `non_blocking=True`, or made from pageable tensors that no
DataLoader could pin (tensors built by hand in the loop; loaders with `pin_memory=False` are rule
D104).

## Why is this bad
A blocking copy makes the host wait until the bytes have arrived before it can queue the forward
pass, so the GPU idles between steps. Copies from pageable memory are also staged through a
driver buffer at about half the bandwidth, and they are always blocking.

Estimated saving: half of the measured copy time per step (pinned copies run at roughly twice the
bandwidth, and non-blocking copies let the host queue the step's kernels meanwhile).

Measured saving: after the run the what-if probe copies the batch the model last trained on to
the GPU as the program did (blocking from pinned memory, or from pageable memory) and with the
fix (non-blocking; for tensors built by hand, `pin_memory()` in the step included), each followed
by forward and backward of a copy of the model, interleaved; the saving is the share of those
phases it saved, at most the copy time itself. Measured no faster: nothing is reported.

## Example
```python
x = torch.from_numpy(batch).to("cuda")
```

## Use instead
```python
x = torch.from_numpy(batch).pin_memory().to("cuda", non_blocking=True)
```

## Fix safety
Safe as long as the host does not modify the source tensor before the copy completes (a
non-blocking copy reads it later); reading the result on the GPU is always ordered correctly.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import (
    PINNED_COPY_SAVING,
    clamp,
    gib,
    on_cuda,
    pct,
    secs,
    severity_for,
    step_profile,
    training_loaders,
)
from torchdoctor.diagnose.rules._measured import Saving, copy_saving

CODE = "D402"
TITLE = "Blocking or pageable host-to-device copies"
MIN_H2D_SHARE = 0.05


def check(run: RunObservation) -> list[Finding]:
    profile = step_profile(run)
    t = run.transfers
    if profile is None or not on_cuda(run) or t.copies_per_step <= 0:
        return []
    h2d_share = profile.share("h2d")
    if h2d_share < MIN_H2D_SHARE:
        return []
    pinned = t.pinned_fraction if t.pinned_fraction is not None else 0.0
    non_blocking = t.non_blocking_fraction if t.non_blocking_fraction is not None else 0.0
    unpinned_loader = any(not ld.pin_memory for ld in training_loaders(run))
    blocking_pinned = pinned >= 0.5 and non_blocking < 0.5
    pageable_by_hand = pinned < 0.5 and not unpinned_loader
    if not (blocking_pinned or pageable_by_hand):
        return []
    estimate = Saving(
        clamp(h2d_share * PINNED_COPY_SAVING),
        "estimated",
        f"estimate: half the copy time measured per step ({secs(profile.seconds('h2d'))}): "
        "pinned copies run at about twice the bandwidth, non-blocking ones overlap",
    )
    saving = copy_saving(run, "non_blocking" if blocking_pinned else "pinned_by_hand", estimate)
    if saving is None:
        return []
    evidence = [
        f"{t.copies_per_step:g} host-to-device copies per step ({gib(t.bytes_per_step)}) took "
        f"{pct(h2d_share)} of the step ({secs(profile.seconds('h2d'))}).",
        f"{pct(pinned)} of the bytes came from pinned memory; {pct(non_blocking)} of the copies "
        "were non_blocking.",
    ]
    if t.locations:
        evidence.append("Copies at " + ", ".join(t.locations[:3]) + ".")
    evidence += saving.evidence
    fix = (
        "x = x.to(device, non_blocking=True)  # the source is already pinned"
        if blocking_pinned
        else "x = x.pin_memory().to(device, non_blocking=True)"
    )
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity=severity_for(saving.fraction),
            saving=saving.fraction,
            evidence=evidence,
            fix=fix,
            source="docs/techniques/pinned-memory-non-blocking.md; PyTorch tutorial: A guide on "
            "good usage of non_blocking and pin_memory()",
            explanation="Blocking copies stop the host from queueing GPU work; pageable copies "
            "run at about half the bandwidth.",
            details={
                "h2d_share": h2d_share,
                "pinned_fraction": t.pinned_fraction,
                "non_blocking_fraction": t.non_blocking_fraction,
            },
            saving_basis=saving.basis,
            saving_how=saving.how,
        )
    ]
