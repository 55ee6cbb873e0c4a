"""D801: one line of the program's own code takes a large share of every step.

## What it does
Flags a line of the training script (or of the user's own modules: not torch, installed packages,
the standard library) on which the training thread spent a large share of the measured steps
outside the model's forward and backward, the optimizer and data loading (but for a wait on a queue
the program's own producer fills, which the step books as data), as sampled by the line
profile (a sampler thread reading the training thread's stack every 3 ms). When a call spreads
its time over many lines of a user function, the call is the line named; a loop within the step
counts its lines together, its header (evaluated once an iteration) included. The finding says what
the line does when that is recognisable from the library code it called, its text and the loop
around it: a deep copy, file or JSON I/O, formatting tensors as text, a host copy feeding NumPy or
Python work, a Python loop over the parameters or over the samples of a batch, a tensor built
by `torch.tensor` from a Python list, a tensor concatenated onto itself every step (a history
copied whole each time), a second model
call in every step whose output gets no gradient (outside validation: a metric's forward), NumPy
work seen only in what the line called (a NumPy replay buffer's sampling: no tensor read to the
host), a call into an installed package whose time is the package's (PyG's `recon_loss` sampling
negative edges on the host), a progress bar redrawn at every call (tqdm's `set_postfix` and
`set_description` refresh the display by default: `refresh=False` leaves it to `update()`'s
throttle), a wait for the next batch from a queue that a producer thread or process fills (the
step waits for data prepared outside any DataLoader). A line that only
calls the model, a loss, a policy's distribution (`dist.sample()`) or the optimizer is compute,
not a hot line, and is never flagged.

A line that steps a reinforcement-learning environment (gymnasium, gym, PettingZoo, EnvPool,
dm_control) is the program's own work, not overhead: it is not flagged.

In a program that updates its parameters by hand (no torch.optim optimizer), the update runs
outside the phases the step tells apart: an unrecognised line there may be that update (a DP-SGD
step's per-sample clipping and noise), and no saving is claimed for it (information).

Thresholds: 5% of the step for a recognised kind, 15% for a line whose work is not recognised
(the program's own code, or a call into an installed package).
A warning needs its saving less two standard deviations of its sample count (a count of n samples
varies by about the square root of n) to reach a warning's 10%: a share from 5 samples is mostly
chance (one stalled write holding the thread on a busy machine), and is info.

## Why is this bad
Time outside the model is time the accelerator waits and the model does not learn. A line that
takes a fifth of every step costs a fifth of the run, and is often there by accident: a metric
computed in NumPy, a log written every step, a copy made "to be safe".

Measured saving: the line's sampled time per step (the measured share of the samples taken in the
measured steps). Work that can run every 10th step (I/O, printing, copies, host-side metrics)
gives back nine tenths of it, which is what is claimed; for loops and unrecognised code, the
estimated saving is the line's whole time (an upper bound: vectorised, the work still costs
something). Either is at most nine tenths of the time of the phase the line ran in (the step's
time outside the model, or evaluation): never the whole step.

## Example
```python
for x, y in loader:
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    history.append(np.corrcoef(model(x).detach().numpy().ravel(), y.numpy().ravel()))
```

## Use instead
```python
for step, (x, y) in enumerate(loader):
    ...
    if step % 100 == 0:
        history.append(torch.corrcoef(torch.stack([pred.ravel(), y.ravel()]))[0, 1].item())
```

## Fix safety
Depends on the line: running a log or a metric less often changes only what is recorded.
"""

from __future__ import annotations

import math

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import LineStat, RunObservation
from torchdoctor.diagnose.rules._common import (
    StepProfile,
    clamp,
    measured_steps,
    pct,
    secs,
    step_profile,
)
from torchdoctor.diagnose.rules._lines import (
    HotLine,
    hot_lines,
    repeated_model_calls,
    sampled_severity,
    samples_of,
)
from torchdoctor.diagnose.step_analysis import evaluation_is_acting

CODE = "D801"
TITLE = "A line of the program's own code takes a large share of every step"
MIN_SHARE = 0.05  # recognised work
MIN_SHARE_UNKNOWN = 0.15  # work the finding cannot name
EVERY = 10  # removable work run every EVERY-th step keeps 1/EVERY of its cost
MAX_FINDINGS = 3
# of the phase the line runs in: the sampled share may exceed it by noise; the rest of the
# phase (the loop's own overhead, the optimizer's glue) stays whatever the line becomes
MAX_GIVEN_BACK = 0.9
REPEATED_EVERY = 0.8  # a model call outside training in this share of the steps repeats work
# a line sampled in at most this share of the steps its samples would touch, spread evenly, runs
# in some steps only (once an epoch: a profiler's table, a checkpoint): not "every step"
SOME_STEPS = 0.5
MIN_STEPS_TO_TELL = 6  # steps an even spread would touch, at least, to tell
# steps a line running in every step would leave unsampled, expected, below which a step without
# a sample of it means the line did not run there
MISSED_BY_CHANCE = 0.05
# what other rules already report with their own advice: line kinds and locations
CLAIMED_KINDS = ("model_copy", "backward")
# the program's own work, not overhead around training: an RL environment's simulation (whether
# vectorised or asynchronous environments pay off changes the rollout, which is not measured)
UNFLAGGED_KINDS = ("environment",)
# work the finding cannot name: the program's own code, or a package's (Lightning's `self.log`
# is 10-13% of a small model's step): the higher bar, MIN_SHARE_UNKNOWN
UNNAMED_KINDS = ("python", "package")


def _claimed_locations(run: RunObservation) -> set[str]:
    return set(run.io.locations) | set(run.tensor_creation.locations)


def _phase_share(run: RunObservation, profile: StepProfile, phase: str) -> float:
    """The phase's time per step as a share of the mean step: what removing the line's work can
    give back at most (evaluation is cut out of the steps: its time per step over the step)."""
    if phase != "evaluation":
        return profile.share(phase)
    steps = measured_steps(run)
    train_s = sum(s.wall_s for s in steps)
    return sum(s.evaluation_s for s in steps) / train_s if train_s > 0 else 0.0


def _how_often(line: LineStat, run: RunObservation) -> str:
    """Says "every step", or "N of the M measured steps" for a line sampled in far fewer steps
    than its samples would touch if it ran in every one (a line that runs every step but for less
    than the sampling interval is seen in a few steps too: that is not enough to tell)."""
    steps = run.lines.steps
    if steps <= 0 or line.steps_seen <= 0:
        return "every step"
    spread = steps * (1 - math.exp(-line.samples / steps))  # steps hit if it ran in every one
    # few steps (slow ones: U-Net's 3 measured steps of 9 s) cannot spread a count, but a line
    # sampled 90 times in one of them would have been seen in each had it run in each
    missed_by_chance = steps * math.exp(-line.samples / steps)
    if (spread >= MIN_STEPS_TO_TELL and line.steps_seen <= SOME_STEPS * spread) or (
        line.steps_seen < steps and missed_by_chance < MISSED_BY_CHANCE
    ):
        return f"{line.steps_seen} of the {steps} measured steps"
    return "every step"


def _finding(hot: HotLine, run: RunObservation, profile: StepProfile) -> Finding:
    line, kind = hot.line, hot.kind
    step_s, seconds_per_sample = profile.step_s, run.lines.seconds_per_sample
    how_often = _how_often(line, run)
    # work thinned to every EVERY-th step keeps 1/EVERY of it; not a line that already runs in
    # some steps only (its saving is then the upper bound: all of it)
    removable = kind.removable and how_often == "every step"
    # the line's sampled share, never more than its phase could give back (sampling noise)
    cap = MAX_GIVEN_BACK * _phase_share(run, profile, line.phase)
    saving = min(clamp(hot.share * (1 - 1 / EVERY) if removable else hot.share), cap)
    # parameters updated by hand (no torch.optim optimizer): the update is booked outside the
    # phases, and unrecognised code there may be it (a DP-SGD's per-sample clipping and noise),
    # work the step needs: no saving claimed for it
    may_be_update = run.manual_updates and kind.name in UNNAMED_KINDS and line.phase == "other"
    if may_be_update:
        saving = 0.0
    samples = samples_of(hot)
    where = "the step"
    if line.phase == "evaluation":  # an RL loop's acting, as the report's line table names it
        where = "acting" if evaluation_is_acting(run) else "evaluation"
    evidence = [
        f"{line.location} (in {line.function}) took {pct(hot.share)} of the step "
        f"({secs(hot.share * step_s)} of {secs(step_s)}; {samples} samples of "
        f"{secs(seconds_per_sample)}), in {where}: `{line.code}`",
        f"It {kind.what}.",
    ]
    if line.loop:
        evidence.append(f"It runs inside the loop `{line.loop}`.")
    if line.callees:
        evidence.append("It called " + ", ".join(line.callees[:3]) + ".")
    within = "Inside the call" if hot.call_site else "In the same loop"
    for inner in hot.inner:
        evidence.append(f"{within}: {inner.location} {pct(inner.self_share)} `{inner.code}`")
    if line.chain:
        evidence.append("Called from " + " <- ".join(line.chain[:3]) + ".")
    sampled = (
        f"measured share of samples: {samples} of the {run.lines.samples} taken in the measured "
        f"steps were on the line ({pct(hot.share)} of the step)"
    )
    if removable:
        how = f"{sampled}; {EVERY - 1}/{EVERY} of it: the work run every {EVERY}th step"
    else:
        how = (
            f"estimate, an upper bound: {sampled}, all of it (vectorised code still costs "
            f"some), at most {pct(MAX_GIVEN_BACK)} of the {line.phase} phase's time"
        )
    if may_be_update:
        evidence.append(
            "The program updates its parameters by hand (no torch.optim optimizer): the update "
            "runs outside the phases the step tells apart, and this line may be part of it (a "
            "per-sample clipping, noise, the update itself), work every step needs: no saving "
            "is claimed."
        )
        how = "none claimed: the line may be the program's own parameter update"
    if how_often != "every step":  # the share is its time over all the measured steps
        evidence.insert(1, f"It ran in {how_often} only; the share is its time over all of them.")
    return Finding(
        id=CODE,
        title=_title(line.location, hot.share, how_often, kind.what),
        severity=sampled_severity(saving, samples),
        saving=saving,
        evidence=evidence,
        fix=kind.fix,
        source="docs/diagnose.md (the line profile); PyTorch docs: Performance Tuning Guide",
        explanation="Time in the program's own Python outside the model is time the model "
        "does not train; this line is where this run's went.",
        details={
            "location": line.location,
            # the line and, for a call or a loop, the lines inside it (shown under the finding)
            "locations": [line.location, *(inner.location for inner in hot.inner)],
            "phase": line.phase,
            "kind": kind.name,
            "share": hot.share,
            "samples": samples,
            "call_site": hot.call_site,
        },
        saving_basis="measured" if removable and not may_be_update else "estimated",
        saving_how=how,
    )


def check(run: RunObservation) -> list[Finding]:
    profile = step_profile(run)
    if profile is None or not run.lines.lines:
        return []
    claimed = _claimed_locations(run)
    findings = []
    spots = hot_lines(run, MIN_SHARE) + repeated_model_calls(run, MIN_SHARE, REPEATED_EVERY)
    for hot in sorted(spots, key=lambda h: -h.share):
        if hot.kind.name in CLAIMED_KINDS + UNFLAGGED_KINDS or hot.line.location in claimed:
            continue
        if any(inner.location in claimed for inner in hot.inner):
            continue  # a call of a helper whose hot line another rule reports (torch.save)
        if hot.kind.name in UNNAMED_KINDS and hot.share < MIN_SHARE_UNKNOWN:
            continue
        findings.append(_finding(hot, run, profile))
    return findings[:MAX_FINDINGS]


def _title(location: str, share: float, how_often: str, what: str) -> str:
    if how_often == "every step":
        return f"{location} takes {pct(share)} of every step: it {what}"
    return f"{location} takes {pct(share)} of the measured time, in {how_often}: it {what}"
