"""D210: the optimizer step is a large share and runs one tensor at a time.

## What it does
Flags an optimizer that accepts a fused or foreach implementation (torch's Adam, AdamW, SGD and
Adagrad have both; RAdam, NAdam, RMSprop, Adamax and others foreach only: what its constructor or
its defaults take decides, not its class's name) that runs the per-tensor loop (on a CPU
PyTorch's default, on a CUDA device only when `foreach=False` was passed), when the what-if probe
timed the fused (or foreach) step at 0.8x the loop's time or less
on a clone; without that measurement, when the step takes 10% or more of a typical training step
(its median, or its share of the steps' profile where larger: on a busy machine the median step
holds a preemption that the optimizer phase's own median does not, and its share read 2% at load
10 where the profile read 14-16%, as at idle).

## Why is this bad
The per-tensor implementation updates each parameter with a chain of separate ops (Adam: about
ten), each a full pass over the tensor and its optimizer state, and each paying dispatch overhead.
`fused=True` does the whole update in one pass per tensor; `foreach=True` batches each op over all
tensors. `bench/rule_fix_speedups.py` (2-core CPU, one thread, AdamW) measured 7.0 ms per step in
the default loop, 5.8 ms with `foreach=True` and 0.5 ms with `fused=True` for 0.8M parameters in
4 tensors; 0.72, 0.62 and 0.23 ms for a 7-layer, 256-wide MLP.

Measured saving: after the run the what-if probe steps a clone of the optimizer (its parameters,
gradients and state) as the program ran it and with `fused=True` (`foreach=True` where the class
has no fused kernel), interleaved; the saving is the measured optimizer time times the
alternative's relative gain, and the fix names that alternative. That time is at most what the
clone's step took as run (in wall time: a CPU-time timing is divided by the run's CPU share):
an optimizer phase much longer than the step itself (a framework's wrapper around
`optimizer.step()`, Lightning Fabric's) is not what the fix speeds up; and it is at most the
optimizer phase's part of the typical step (its share of the profile times that step, where
larger than the phase's median: a busy machine's preemption is in the step's wall time, while
the phase's median is often an undisturbed one; capped by that median, D210 stated 2% on a
profiled loop at load 12 where `fused=True` gained 7-24%). The seconds saved are a
share of the step as the program runs without torchdoctor: the diagnosed step less what the
probes' hooks added to the forward, backward and optimizer phases (each compared with the same
work timed on copies; on a 1 ms step the hooks took as long as the work), plus the input waits
the measured steps had beyond the median step's (an epoch's start-up of respawned workers, 41
ms against a 3 ms median step: the fused step shortens none of it). A program that ran its
steps under `torch.profiler` has both steps timed under one too. On a CPU, where the program's
steps page-faulted (a per-tensor step's temporaries as large as its tensors, their memory handed
back to the system between steps: d210 faulted ~1300 pages a step), the clone's step as run is
also timed from memory handed back, mixed in the share of the faults the program paid (timed
back to back, the clone's step reused the memory and took 0.6x the program's). When the alternatives
measured
no clearly faster (over 0.8x the loop's time), nothing is reported. Estimated saving, without that
measurement (over the probes'
time budget): half of the optimizer time (a conservative 2x, under the fused speed-ups measured
above); where other optimizers step beside the looping ones (SparseAdam for embedding tables),
the looping optimizers' own measured `step()` time instead of the whole optimizer phase. It is a
warning when the saving, measured or estimated, is a quarter of the step or more: below that it
is information, and a larger batch (D202, an information finding that changes what is learned,
ranked below every warning) keeps its place above it on a tiny-batch loop.

## Example
```python
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
```

## Use instead
```python
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
# torch < 2.4 on CPU has no fused kernel: foreach=True
```

## Fix safety
Safe: the same update rule; results can differ in the last bits because the arithmetic is
ordered differently. `fused=True` needs floating-point parameters on one device type.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding, SavingBasis
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import (
    INPUT_PHASES,
    clamp,
    median_phase_s,
    on_cuda,
    over_input_waits,
    pct,
    secs,
    step_profile,
    stepped_optimizers,
    typical_step_s,
)
from torchdoctor.diagnose.rules._measured import fastest, how
from torchdoctor.diagnose.rules._unprobed import on_step_clock, step_without_probes_s

CODE = "D210"
TITLE = "Optimizer step runs tensor by tensor (no fused/foreach implementation)"
MIN_OPTIMIZER_SHARE = 0.10  # without a measurement: a smaller step is not worth an estimate
# measured: the alternative must take at most this share of the loop's time, a margin beyond the
# 10% within which the what-if's rounds agree (guard.SETTLED_RATIO)
MEASURED_FASTER = 0.8
FUSED_SPEEDUP = 2.0
# The fix touches the optimizer's code path, so below a quarter of the step it is information only.
# (Round 8 tried a measured saving as a warning from 10%, as other rules: on batch-2 loops the
# fused step's measured 20% then put the batch size, D202, below it: issue 9's first symptom.)
WARNING_SAVING = 0.25
# the step without our probes is named in the finding when it is this much shorter
PROBES_WORTH_SAYING = 0.05


def check(run: RunObservation) -> list[Finding]:
    step_s = typical_step_s(run)
    if step_s <= 0:
        return []
    # CUDA defaults to foreach already; there only an explicit foreach=False is the loop
    # what the optimizer accepts decides, not its class's name: RAdam, NAdam, RMSprop, Adamax...
    # have a foreach implementation and no fused one
    looping = [
        o
        for o in stepped_optimizers(run)
        if o.implementations
        and (o.foreach_or_fused is False or (o.foreach_or_fused is None and not on_cuda(run)))
    ]
    optimizer_s = median_phase_s(run, "optimizer")
    # beside other optimizers (a SparseAdam for embeddings, a GAN's second one) only the
    # looping ones' own steps are this rule's: not the whole phase
    looping_s = [o.step_s for o in looping if o.step_s is not None]
    whole_phase = True  # the looping optimizers' steps are the whole optimizer phase
    if looping_s and len(looping_s) == len(looping) and len(looping) < len(stepped_optimizers(run)):
        optimizer_s = min(optimizer_s, sum(looping_s))
        whole_phase = False
    # the phase's share of the typical step, read from the steps' profile where larger than its
    # median's: on a busy machine the median step holds a preemption that a phase's own median
    # does not (multi_anomaly_adamw at load 10: 1.0 ms of a 5.5 ms step, 18%; then of a 46 ms
    # step, 2%, and the estimate came and went; the profile read 14-16% in both)
    share = clamp(_phase_on_step_clock(run, optimizer_s, step_s, whole_phase) / step_s)
    measured = fastest(run, "optimizer")
    if not looping or (measured is None and share < MIN_OPTIMIZER_SHARE):
        return []
    saving = clamp(share * (1 - 1 / FUSED_SPEEDUP))
    optimizer = looping[0]
    basis: SavingBasis = "estimated"
    setting = "fused=True" if "fused" in optimizer.implementations else "foreach=True"
    saving_how = f"assumes {FUSED_SPEEDUP:g}x faster"
    plain_s = step_s
    if measured is not None:
        # the measurement decides, not the share: the optimizer's share of a step lengthened by
        # other problems sat near the 10% line and the finding came and went between runs; a
        # fused step 0.1-0.5x the loop's is far from MEASURED_FASTER, a noisy 0.9-1.1 is not
        if measured.ratio > MEASURED_FASTER:
            return []  # not clearly faster than the loop on this program: no claim
        # the part the implementation changes, no longer than the phase on the typical step's
        # clock: a busy machine's preemption is in the median step's wall time, spread over its
        # phases, while a phase's own median is often an undisturbed one (a profiled loop at
        # load 12: 0.5 ms median phase, 28% of an 11.4 ms step, a 0.46 ms CPU-time step on the
        # clone at a 22% CPU share: the cap held D210 at 2% where fused=True gained 7-24%)
        math_s = min(
            _phase_on_step_clock(run, optimizer_s, step_s, whole_phase),
            on_step_clock(run, measured.as_run_s, measured),
        )
        plain_s = step_without_probes_s(run)  # the seconds saved are a share of this step
        saving = clamp(math_s / plain_s * (1 - measured.ratio))
        # the flag timed ("optimizer.fused"), not the setting's words on how it was timed
        setting, basis = f"{measured.name.split('.')[-1]}=True", "measured"
        saving_how = how(measured, "the optimizer step")
        if plain_s < step_s * (1 - PROBES_WORTH_SAYING):
            saving_how += (
                f", of a {secs(plain_s)} step without torchdoctor's probes "
                f"({secs(step_s)} diagnosed; forward, backward and the step timed on copies)"
            )
    # the seconds saved in every step over the steps as run: the median step does not weigh the
    # slow ones (an epoch's worker start-up), which a fused step does not shorten
    saving = over_input_waits(run, saving, plain_s, median_phase_s(run, *INPUT_PHASES))
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity="warning" if saving >= WARNING_SAVING else "info",
            saving=saving,
            evidence=[
                f"The optimizer step took {secs(optimizer_s)} (median), {pct(share)} of a "
                f"typical {secs(step_s)} step (its share of the steps' profile where larger).",
                f"{optimizer.class_name} at {optimizer.location or 'an unknown line'} runs the "
                "per-tensor loop (neither fused=True nor foreach=True).",
            ]
            + ([f"Measured: {saving_how}."] if basis == "measured" else []),
            fix=f"torch.optim.{optimizer.class_name}(model.parameters(), ..., {setting})",
            source="PyTorch docs: torch.optim (foreach and fused implementations)",
            explanation="The default loop updates each tensor with about ten separate ops; a "
            "fused step does it in one pass.",
            details={
                "optimizer_s": optimizer_s,
                "optimizer_share": share,
                "optimizer": optimizer.class_name,
            },
            saving_basis=basis,
            saving_how=saving_how,
        )
    ]


def _phase_on_step_clock(
    run: RunObservation, optimizer_s: float, step_s: float, whole_phase: bool
) -> float:
    """The optimizer phase as a part of the typical (median) step: its share of the profile's
    mean step times that step, where larger than its own median (`optimizer_s`) and the phase is
    the looping optimizers' alone."""
    profile = step_profile(run)
    if profile is None or not whole_phase:
        return optimizer_s
    return max(optimizer_s, profile.share("optimizer") * step_s)
