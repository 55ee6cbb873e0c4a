"""The measured cost of a debugging mode left on (torch.profiler D212, anomaly detection D211):
forward and backward of a copy of the model timed with the mode on and off after the run (the
what-if probes), else extra seconds per op, timed on a small benchmark with the mode on and off,
times the ops the sampled step dispatched. Pure."""

from __future__ import annotations

from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import StepProfile, clamp, pct
from torchdoctor.diagnose.rules._measured import fastest, how

# the mode slows the ops; at most this share of the phases where ops run can be given back
MAX_GIVEN_BACK = 0.9
OP_PHASES = ("forward", "backward", "optimizer", "other")
MIN_ACTIVE = 0.5  # of the measured steps: the program's profiler recorded the run
# said under the finding: the per-op rules stay silent while a mode inflates every op
PER_OP_RULES_SILENT = (
    "The per-op overhead rules (D202 batch size, D203 tiny-op loops) are not judged on this run: "
    "the mode's own cost per op would be taken for the program's; rerun with it off."
)


def debugging_mode_on(run: RunObservation) -> bool:
    """Anomaly detection or the program's own profiler was on during the measured steps: every
    op's time (and, under anomaly mode, the op count) includes the mode's own work."""
    active = run.habits.profiler_active_share
    return bool(run.environment.anomaly_detection) or (active is not None and active >= MIN_ACTIVE)


def mode_cost_share(
    run: RunObservation,
    profile: StepProfile,
    op_overhead_s: float | None,
    phases: tuple[str, ...] = OP_PHASES,
):
    """(share of the step the mode costs, seconds per step), or None when not measured, or when
    the benchmark measured no extra cost per op (load on the machine moved its two sides: a mode
    known to cost is not free; the rule's documented factor stands; d211 at load 15-19 was
    stated 0% against 69% that `--try anomaly_off` gained); at most MAX_GIVEN_BACK of the
    `phases` whose ops the mode slows."""
    ops = run.compute.ops_per_step
    if op_overhead_s is None or op_overhead_s <= 0 or not ops:
        return None
    seconds = op_overhead_s * ops
    cap = MAX_GIVEN_BACK * profile.share(*phases)
    return clamp(min(seconds / profile.step_s, cap)), seconds


def measured_on_copy(
    run: RunObservation, profile: StepProfile, whatif: str, mode: str, loop_ops: bool = False
) -> tuple[float, str, str] | None:
    """(share of the step, evidence sentence, how) from the what-if that timed forward and
    backward of a copy with the mode on and off; None when it did not run. `loop_ops`: the
    mode slows every op alike (the profiler records each one), so the measured slowdown also
    applies to the loop's ops outside the model and optimizer (the "other" phase: loss,
    zero_grad, making the batch), at most MAX_GIVEN_BACK of it. --try profiler_off measured
    d212's gain at 43% of CPU time where forward, backward and optimizer alone gave 16%."""
    measured = fastest(run, whatif)
    if measured is None or undecided_on_copy(run, whatif):
        return None
    with_optimizer = "optimizer" in measured.unit  # the clone's step was timed too
    phases = ("forward", "backward", "optimizer") if with_optimizer else ("forward", "backward")
    share = profile.share(*phases)
    saving = _share_at(profile, measured.unit, measured.ratio, loop_ops)
    what = "Forward, backward and the optimizer step" if with_optimizer else "Forward and backward"
    rest = (
        "the loop's other ops counted alike"
        if loop_ops
        else "the loop's own ops pay it too, not counted"
    )
    pairs = pairs_range(profile, measured, loop_ops)
    sentence = (
        f"{what} took {pct(share)} of the step; {mode} made them "
        f"{1 / max(measured.ratio, 1e-9):.2f}x slower, measured on a copy (about {pct(saving)} "
        f"of the step; {rest})" + (f"; {pairs}." if pairs else ".")
    )
    return saving, sentence, how(measured, measured.unit) + (f"; {pairs}" if pairs else "")


def pairs_range(profile: StepProfile, measured, loop_ops: bool) -> str:
    """Where the what-if's pairs of blocks (on and off back to back, the load of other
    processes moving both sides of a pair alike) put the mode's cost, in words, where they
    span a point or more of the step; "" where it did not time pairs. The median is what the
    finding states; the range is said beside it: d212's stated cost moved from 19% to 59% of
    the step over 8 diagnoses at load 12-34, one diagnosis's pairs 20 points apart."""
    if measured.pair_ratios is None:
        return ""
    low, high = measured.pair_ratios
    least = _share_at(profile, measured.unit, high, loop_ops)
    most = _share_at(profile, measured.unit, low, loop_ops)
    if most - least < 0.01:
        return ""
    return f"its pairs of blocks put it at {pct(least)}-{pct(most)} of the step, the median stated"


def _share_at(profile: StepProfile, unit: str, ratio: float, loop_ops: bool) -> float:
    """The step's share a mode costs where the copy's `unit` of work took `ratio` of its time
    with it off: the timed phases' share times the gain (the loop's other ops alike where the
    mode slows every op, at most MAX_GIVEN_BACK of them)."""
    phases = (
        ("forward", "backward", "optimizer") if "optimizer" in unit else ("forward", "backward")
    )
    gain = max(0.0, 1 - ratio)
    saving = profile.share(*phases) * gain
    if loop_ops:
        saving += profile.share("other") * min(gain, MAX_GIVEN_BACK)
    return clamp(saving)


def most_on_copy(
    run: RunObservation, profile: StepProfile, whatif: str, loop_ops: bool = False
) -> float | None:
    """The largest share of the step the what-if's pairs found the mode costing (its lowest
    pair's ratio), where they disagreed; None where it did not time pairs or they agreed. No
    pair saw more: an estimate above it is its benchmark's, not this program's (d212: the
    per-op estimate 83-90% where the pairs, 0.41x-1.36x, saw at most 53%, and `--try
    profiler_off` gained 28-38%)."""
    measured = fastest(run, whatif)
    if measured is None or not undecided_on_copy(run, whatif) or measured.pair_ratios is None:
        return None
    return _share_at(profile, measured.unit, measured.pair_ratios[0], loop_ops)


def undecided_on_copy(run: RunObservation, whatif: str) -> str:
    """Why the what-if `whatif`, timed in back-to-back pairs of blocks, decided nothing (its
    pairs' ratios on both sides of 1: one pair found the mode costly, another found it free, as
    another process's load on a busy machine can make them), or "" (decided, or not timed in
    pairs). A median of undecided pairs can land on 1.0 and state a cost of 0."""
    measured = fastest(run, whatif)
    if measured is None or measured.pair_ratios is None:
        return ""
    low, high = measured.pair_ratios
    if low < 1 <= high:
        return (
            f"timed on a copy, on and off in pairs, the pairs disagreed ({low:.2f}x-{high:.2f}x "
            "the time without it): undecided"
        )
    return ""
