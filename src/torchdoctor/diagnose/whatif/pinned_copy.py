"""What-if (CUDA only): the training batch copied to the GPU as the program copied it vs from
pinned memory with `non_blocking=True` (rules D104 and D402's fixes), each followed by forward
and backward of the model's copy on the copied batch, so a non-blocking copy's overlap with the
queued kernels is in the number. The batch is the real one the model last trained on, brought
back to the host (pageable, or pinned as the program had it). On a CPU run nothing is copied to
a device: the probe is not planned, and the rules stay silent there.

Three cases, one timing name each (the rule whose fix it is reads its own):

- `h2d.pin_memory` (D104): a DataLoader with `pin_memory=False`; pageable blocking copies vs
  batches already pinned (the loader's pin thread pins them beside the step), non-blocking;
- `h2d.non_blocking` (D402): batches pinned but copied blocking vs the same, non-blocking;
- `h2d.pinned_by_hand` (D402): tensors built by hand in pageable memory vs
  `x.pin_memory().to(device, non_blocking=True)` in the step (the pinning copy is timed too).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

from torchdoctor.diagnose.observations import WhatIfTiming
from torchdoctor.diagnose.probes.base import first_tensor
from torchdoctor.diagnose.whatif.guard import compare
from torchdoctor.diagnose.whatif.replay import Replay
from torchdoctor.intercept.hooks import map_tensors

Case = Literal["pin_memory", "non_blocking", "pinned_by_hand"]

SETTINGS: dict[Case, str] = {
    "pin_memory": "batches pinned by the loader (pin_memory=True), copied with non_blocking=True",
    "non_blocking": "the pinned batches copied with non_blocking=True",
    "pinned_by_hand": "x.pin_memory().to(device, non_blocking=True) in the step",
}


def case_for(
    pinned_fraction: float | None, non_blocking_fraction: float | None, unpinned_loader: bool
) -> Case | None:
    """The fix the run's copies call for (None: they are pinned and non-blocking already)."""
    if unpinned_loader:
        return "pin_memory"
    pinned = (pinned_fraction or 0.0) >= 0.5
    if pinned and (non_blocking_fraction or 0.0) < 0.5:
        return "non_blocking"
    return None if pinned else "pinned_by_hand"


def measure_copies(replay: Replay, case: Case, allowance_s: float) -> list[WhatIfTiming]:
    """Copy, forward and backward per training step, as run vs with the case's fix."""
    first = first_tensor(replay.args) if replay.args else first_tensor(replay.kwargs)
    if replay.device_type != "cuda" or first is None:
        return []
    device = first.device
    pageable = map_tensors((replay.args, replay.kwargs), lambda t: t.detach().cpu())
    pinned = map_tensors(pageable, lambda t: t.pin_memory())

    def step(host, pin: bool, non_blocking: bool) -> None:
        def copy(t):
            return (t.pin_memory() if pin else t).to(device, non_blocking=non_blocking)

        args, kwargs = map_tensors(host, copy)
        replace(replay, args=tuple(args), kwargs=dict(kwargs)).forward_backward()

    as_run = (
        (lambda: step(pinned, False, False))
        if case == "non_blocking"
        else (lambda: step(pageable, False, False))
    )
    fixed = (
        (lambda: step(pageable, True, True))
        if case == "pinned_by_hand"
        else (lambda: step(pinned, False, True))
    )
    return [
        compare(
            f"h2d.{case}",
            "copy, forward and backward",
            SETTINGS[case],
            (as_run, fixed),
            "cuda",
            allowance_s,
        )
    ]
