"""Limits a measured speedup must respect before it is believed (QA2-4, QA2-8).

- Amdahl's bound: a fix only speeds up the phases it acts on (`SHORTENS` in its module: loader
  fixes data and host-to-device copies, compute fixes forward and backward, ...). If the diagnosis measured those phases
  at a share `p` of the step, no speedup can exceed `1 / (1 - p)`; a measured one beyond it (and
  beyond the baseline's own spread) is noise or an artefact, not a gain.
- CPU agreement: on a CPU device, a compute fix changes work the training process does itself,
  so its CPU time per step must improve too; a wall-time gain that CPU time does not confirm is
  the load of other jobs on a shared machine.
"""

from __future__ import annotations

from torchdoctor.trials.fixes import get_fix

DATA_PHASES = ("data", "h2d")
UNBOUNDED = ("step", "evaluation")  # not in the step breakdown: no bound from it


def phases_for(fixes: list[str]) -> set[str]:
    """The phases the fixes can shorten (`SHORTENS` in each fix module)."""
    return {phase for name in fixes for phase in get_fix(name).SHORTENS}


def _data_only(fix: str) -> bool:
    return set(get_fix(fix).SHORTENS) <= set(DATA_PHASES)


def amdahl_bound(fixes: list[str], breakdown: dict | None) -> float | None:
    """The largest speedup the fixes can give, from the diagnosis's phase shares (None: no
    diagnosis, the phases they act on are the whole step, or they act outside the training
    step's phases: evaluation, the whole run)."""
    if not breakdown or not fixes:
        return None
    phases = phases_for(fixes)
    if phases & set(UNBOUNDED):
        return None
    share = sum(breakdown.get(phase, 0.0) for phase in phases)
    return 1.0 / (1.0 - share) if share < 0.999 else None


def needs_cpu_agreement(fixes: list[str], device_type: str) -> bool:
    return device_type == "cpu" and bool(fixes) and not any(_data_only(f) for f in fixes)
