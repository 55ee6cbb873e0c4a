"""Limits a measured speedup must respect before it is believed (QA2-4, QA2-8).

- Amdahl's bound: a fix only speeds up the phases it acts on (loader fixes: data and host-to-device
  copies; compute fixes: forward, backward, optimizer). If the diagnosis measured those phases
  at a share `p` of the step, no speedup can exceed `1 / (1 - p)`; a measured one beyond it (and
  beyond the baseline's own spread) is noise or an artefact, not a gain.
- CPU agreement: on a CPU device, a compute fix changes work the training process does itself,
  so its CPU time per step must improve too; a wall-time gain that CPU time does not confirm is
  the load of other jobs on a shared machine.
"""

from __future__ import annotations

DATA_FIXES = frozenset({"workers", "pin_memory", "non_blocking"})
DATA_PHASES = ("data", "h2d")
COMPUTE_PHASES = ("forward", "backward", "optimizer")


def phases_for(fixes: list[str]) -> set[str]:
    phases: set[str] = set()
    for name in fixes:
        phases.update(DATA_PHASES if name in DATA_FIXES else COMPUTE_PHASES)
    return phases


def amdahl_bound(fixes: list[str], breakdown: dict | None) -> float | None:
    """The largest speedup the fixes can give, from the diagnosis's phase shares (None: no
    diagnosis, or the phases they act on are the whole step)."""
    if not breakdown or not fixes:
        return None
    share = sum(breakdown.get(phase, 0.0) for phase in phases_for(fixes))
    return 1.0 / (1.0 - share) if share < 0.999 else None


def needs_cpu_agreement(fixes: list[str], device_type: str) -> bool:
    return device_type == "cpu" and bool(fixes) and not DATA_FIXES.intersection(fixes)
