"""What the what-if probes measured (run.whatif), as the rules need it. Pure; no torch."""

from __future__ import annotations

from torchdoctor.diagnose.observations import RunObservation, WhatIfTiming
from torchdoctor.diagnose.rules._common import secs


def timings(run: RunObservation, name: str) -> list[WhatIfTiming]:
    return [t for t in run.whatif.timings if t.name == name or t.name.startswith(name + ".")]


def fastest(run: RunObservation, name: str) -> WhatIfTiming | None:
    """The alternative with the lowest time among `name`'s timings (None: not measured)."""
    found = [t for t in timings(run, name) if t.as_run_s > 0]
    return min(found, key=lambda t: t.alternative_s) if found else None


def how(timing: WhatIfTiming, what: str) -> str:
    """One line for Finding.saving_how: what was timed, as run vs with the fix."""
    return (
        f"{what} timed after the run on copies: {secs(timing.as_run_s)} per {timing.unit} as run "
        f"vs {secs(timing.alternative_s)} with {timing.setting} "
        f"(median of {timing.repeats}, {timing.ratio:.2f}x the time)"
    )
