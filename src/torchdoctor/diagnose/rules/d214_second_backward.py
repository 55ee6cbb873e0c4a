"""D214: `backward(retain_graph=True)` followed by another backward through the same graph.

## What it does
Flags training steps in which a `backward(retain_graph=True)` is followed by another
`backward()` through the same graph: with no model forward in between (two losses of one
forward pass, each with its own backward through the shared part: a multi-task model, an
auxiliary loss), or after a forward when the later backward's autograd graph walks back into
the retained one (a GAN whose discriminator loss is computed on the generator's output without
`.detach()`, so that the generator step can reuse it; a hidden state carried across steps). The
graphs' nodes are compared, and the time of the backward calls after the first is measured.

## Why is this bad
Each backward walks the shared trunk again, and `retain_graph=True` keeps every saved activation
alive until the last one. Gradients add up, so one backward of the summed losses gives the same
gradients in one pass and frees the graph at once. In the GAN case the discriminator's backward
also runs through the whole generator and writes gradients into it that the generator step
clears before it reads them: detaching the fake for the discriminator's loss stops that backward
at the generator, and the generator's own step needs no retained graph.

Estimated saving: half of the measured time of the later backward calls (the shared part is not
walked twice; the heads' own backward stays).

## Example
```python
loss_cls.backward(retain_graph=True)
loss_reg.backward()
```

## Use instead
```python
(loss_cls + loss_reg).backward()
# a GAN: the discriminator's loss stops at the generator's output
d_loss = bce(D(real), ones) + bce(D(fake.detach()), zeros)
d_loss.backward()  # no retain_graph; the generator's step walks its own graph once
```

## Fix safety
Safe: the gradients are the same sum (up to float rounding). Not for a loop that reads or clips
the first loss's gradients before the second backward.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import clamp, pct, secs, severity_for, step_profile

CODE = "D214"
TITLE = "Two backward passes through one graph (retain_graph=True) where one would do"
MIN_PER_STEP = 0.5  # second backwards per step
SHARED = 0.5  # share of a later backward assumed to walk the shared part again


def check(run: RunObservation) -> list[Finding]:
    profile = step_profile(run)
    habits = run.habits
    if profile is None or habits.retained_backwards_per_step < MIN_PER_STEP:
        return []
    later = habits.second_backward_s_per_step
    share = clamp(later / profile.step_s)
    saving = clamp(share * SHARED)
    where = ", ".join(habits.retained_backward_locations[:3]) or "the training loop"
    after_forward = habits.retained_reused_after_forward_per_step
    if after_forward * 2 >= habits.retained_backwards_per_step:  # most came after a forward
        first = (
            f"{habits.retained_backwards_per_step:g} backward call(s) per step walked back into "
            f"the graph kept by a backward(retain_graph=True), after a model forward ({where}): "
            "a tensor of the first graph (e.g. a generator's output) was not detached."
        )
        fix = (
            "d_loss = criterion(D(fake.detach()), fake_labels)  # stop at the generator\n"
            "d_loss.backward()  # no retain_graph: the generator's step walks its graph once"
        )
    else:
        first = (
            f"{habits.retained_backwards_per_step:g} backward call(s) per step followed a "
            f"backward(retain_graph=True) with no model forward between ({where})."
        )
        fix = "(loss_a + loss_b).backward()  # one pass; no retain_graph"
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity=severity_for(saving),
            saving=saving,
            evidence=[
                first,
                f"Those later backward calls took {secs(later)} per step, {pct(share)} of the "
                f"step ({secs(profile.step_s)}).",
            ],
            fix=fix,
            source="PyTorch autograd docs (gradients accumulate; retain_graph keeps buffers)",
            explanation="Gradients of a sum are the sum of gradients: one backward through the "
            "shared graph gives them all, and frees it at once.",
            details={
                "per_step": habits.retained_backwards_per_step,
                "after_forward_per_step": after_forward,
                "later_s": later,
            },
            saving_how="half the measured time of the later backward calls (the shared part)",
        )
    ]
