"""The training step as the program runs it without torchdoctor's probes, from the what-ifs'
timings on copies (rules that state seconds saved as a share of the step). Pure; no torch."""

from __future__ import annotations

from torchdoctor.diagnose.observations import (
    FORWARD_BACKWARD_TIMING,
    RunObservation,
    WhatIfTiming,
)
from torchdoctor.diagnose.rules._common import median_phase_s, typical_step_s
from torchdoctor.diagnose.rules._measured import fastest
from torchdoctor.diagnose.rules._overhead import cpu_share


def on_step_clock(run: RunObservation, seconds: float, timing: WhatIfTiming) -> float:
    """`seconds` of `timing` on the steps' wall clock: a CPU-time timing is 1/cpu_share longer
    in wall time on a busy machine (at load 19, 5.6 ms of CPU was ~20 ms of a step's wall time)."""
    return seconds / cpu_share(run) if timing.clock == "cpu" else seconds


def step_without_probes_s(run: RunObservation) -> float:
    """The typical step as the program runs it without torchdoctor: the observed step less what
    the probes' hooks added to the phases the what-ifs timed on copies after the run (forward
    and backward of the replay, the optimizer's clone step as run), each on the steps' clock.
    On a 1 ms step the hooks (a cost per op and per module call) took as long as the program's
    own work: a saving in seconds stated as a share of the diagnosed step came out half of what
    `--try` gains on the program. A phase counts as observed where its excess over the copy may
    be the program's own work: several forwards or backwards a step (gradient accumulation,
    several models: the replay is one forward of the largest), or a phase over twice the copy
    (an optimizer wrapper's closure, Lightning's): the hooks' share of a phase is never judged
    over half of it."""
    step_s = typical_step_s(run)
    added = 0.0
    reference = [
        t for t in run.whatif.timings if t.name == FORWARD_BACKWARD_TIMING and t.as_run_s > 0
    ]
    one_forward = len(run.models) <= 1 and all(s.micro_batches <= 1 for s in run.steps)
    if reference and one_forward:
        copy_s = on_step_clock(run, reference[0].as_run_s, reference[0])
        added += _hooks_s(median_phase_s(run, "forward", "backward"), copy_s)
    optimizer = fastest(run, "optimizer")
    if optimizer is not None:
        copy_s = on_step_clock(run, optimizer.as_run_s, optimizer)
        added += _hooks_s(median_phase_s(run, "optimizer"), copy_s)
    return step_s - added if step_s > added else step_s


def _hooks_s(observed_s: float, copy_s: float) -> float:
    """What the probes added to a phase observed at `observed_s` whose work took `copy_s` on a
    copy: the excess, where it is at most the copy's own time (else none: the program's)."""
    excess = observed_s - copy_s
    return excess if 0 < excess <= copy_s else 0.0
