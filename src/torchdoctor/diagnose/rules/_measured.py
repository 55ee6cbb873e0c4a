"""What the what-if probes measured (run.whatif), as the rules need it. Pure; no torch."""

from __future__ import annotations

from dataclasses import dataclass, replace

from torchdoctor.diagnose.findings import SavingBasis
from torchdoctor.diagnose.observations import RunObservation, WhatIfTiming
from torchdoctor.diagnose.rules._common import clamp, kernel_gain_saving, pct, secs, step_profile


def timings(run: RunObservation, name: str) -> list[WhatIfTiming]:
    return [t for t in run.whatif.timings if t.name == name or t.name.startswith(name + ".")]


def fastest(run: RunObservation, name: str) -> WhatIfTiming | None:
    """The alternative with the lowest time among `name`'s timings (None: not measured)."""
    found = [t for t in timings(run, name) if t.as_run_s > 0]
    return min(found, key=lambda t: t.alternative_s) if found else None


def not_measured(run: RunObservation, label: str, location: str | None = None) -> str:
    """Why the what-if `label` (as whatif/__init__.py names it in run.whatif.skipped, on any
    loader or the one at `location`) was skipped, or "" (it ran, the what-ifs were off, or the
    probe was not called for): what an estimate says of its measurement."""
    heads = [f"{label}: ", *([f"{label} at {location}: "] if location else [])]
    for note in run.whatif.skipped:
        for head in heads:
            if note.startswith(head):
                return note[len(head) :]
    return ""


def how(timing: WhatIfTiming, what: str) -> str:
    """One line for Finding.saving_how: what was timed, as run vs with the fix."""
    started = f", {timing.started_from}" if timing.started_from else ""
    return (
        f"{what} timed after the run on copies: {secs(timing.as_run_s)} per {timing.unit} as run "
        f"vs {secs(timing.alternative_s)} with {timing.setting} "
        f"(median of {timing.repeats}, {timing.ratio:.2f}x the time{started})"
    )


@dataclass(frozen=True)
class Saving:
    """A finding's saving (share of the step), how it was obtained, and the one line saying so."""

    fraction: float
    basis: SavingBasis
    how: str

    @property
    def evidence(self) -> list[str]:
        """The evidence line a measured saving adds (none for an estimate)."""
        return [f"Measured: {self.how}."] if self.basis == "measured" else []


def measured_or_estimate(
    run: RunObservation, name: str, share: float, estimate: Saving, what: str
) -> Saving | None:
    """The saving the what-if `name` measured on `share` of the step (the phases its timing
    covers), else `estimate`; None when every alternative measured no faster (nothing to claim)."""
    measured = fastest(run, name)
    if measured is None:
        return estimate
    if measured.ratio >= 1:
        return None
    return Saving(clamp(share * (1 - measured.ratio)), "measured", how(measured, what))


def kernel_gain_or_measured(
    run: RunObservation, name: str, compute_share: float, gain: float, faster: str
) -> Saving | None:
    """A CUDA kernel setting's saving on forward and backward (`compute_share` of the step): the
    what-if `name`'s measurement, else the estimate that `faster` (what the setting brings) is
    `gain` faster on half of that time; None when measured no faster."""
    estimate = Saving(
        kernel_gain_saving(compute_share, gain),
        "estimated",
        f"assumes {faster} {pct(gain)} faster in forward and backward",
    )
    return measured_or_estimate(run, name, compute_share, estimate, "forward and backward")


def copy_saving(run: RunObservation, case: str, estimate: Saving) -> Saving | None:
    """Rules D104/D402: the what-if `h2d.<case>` (copy, forward and backward as run vs pinned and
    non-blocking) on the share of those phases, at most the copy time (a faster copy, or one
    overlapped with the kernels, gives back no more than the copy took); else `estimate`."""
    profile = step_profile(run)
    if profile is None:
        return estimate
    share = profile.share("h2d", "forward", "backward")
    saving = measured_or_estimate(
        run,
        f"h2d.{case}",
        share,
        estimate,
        "copying the batch to the GPU, then forward and backward",
    )
    if saving is None or saving.basis != "measured":
        return saving
    return replace(saving, fraction=min(saving.fraction, profile.share("h2d")))
