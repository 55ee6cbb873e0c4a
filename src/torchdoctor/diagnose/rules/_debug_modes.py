"""The measured cost of a debugging mode left on (torch.profiler D212, anomaly detection D211):
extra seconds per op, timed on a small benchmark with the mode on and off, times the ops the
sampled step dispatched. Pure."""

from __future__ import annotations

from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import StepProfile, clamp

# the mode slows the ops; at most this share of the phases where ops run can be given back
MAX_GIVEN_BACK = 0.9
OP_PHASES = ("forward", "backward", "optimizer", "other")


def mode_cost_share(run: RunObservation, profile: StepProfile, op_overhead_s: float | None):
    """(share of the step the mode costs, seconds per step), or None when not measured."""
    ops = run.compute.ops_per_step
    if op_overhead_s is None or not ops:
        return None
    seconds = op_overhead_s * ops
    cap = MAX_GIVEN_BACK * profile.share(*OP_PHASES)
    return clamp(min(seconds / profile.step_s, cap)), seconds
