"""D111: the DataLoader's `collate_fn` does slow per-sample work of its own.

## What it does
Flags a training `DataLoader` in the training process (`num_workers=0`) whose `collate_fn` takes
50 or more trivial ops' time per sample (the default collate stacks a sample in one to three),
or 3 or more while the tensors it returns come out at under 100 MB/s (Python work per sample,
not a copy at memory speed), when collating takes 15% or more of the step.

## Why is this bad
A collate function that pads, tokenises or converts in a Python loop over samples (or tokens)
repeats that work for every batch in the training process, while the model waits. Built from a
few whole-batch ops (`pad_sequence`, one `torch.stack`, one `torch.as_tensor`), the same batch
costs about what the default collate costs; in worker processes it would at least overlap with
the step.

Estimated saving: the measured collate time per batch minus what the default collate would take
(three trivial ops per sample), capped by the loader's part of the data time per step.

Measured saving: after the run the what-if probe collates the same samples (a few batches of a
copy of the dataset) with the program's `collate_fn` and with a whole-batch one (torch's
`default_collate`, or the same padding variable-length tensors with one `pad_sequence`),
interleaved; only a whole-batch collate that returns the very same batches is timed, and the
saving is the collate's share of the step times the share of its time it saved. Measured no
faster: nothing is reported.

## Example
```python
def pad_collate(samples):
    longest = max(len(s) for s, _ in samples)
    batch = torch.zeros(len(samples), longest, dtype=torch.long)
    for i, (tokens, _) in enumerate(samples):
        for j, t in enumerate(tokens.tolist()):  # one Python step per token
            batch[i, j] = t
    return batch, torch.tensor([y for _, y in samples])
```

## Use instead
```python
from torch.nn.utils.rnn import pad_sequence

def pad_collate(samples):
    tokens, labels = zip(*samples)
    return pad_sequence(tokens, batch_first=True), torch.as_tensor(labels)
```

## Fix safety
Needs review: the batches must stay equal (padding value, dtype, order). Moving the collate to
worker processes instead is safe if the function is picklable (defined at module level).
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding, SavingBasis
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import (
    clamp,
    cpu_count,
    pct,
    secs,
    severity_for,
    step_profile,
    suggested_workers,
    training_loaders,
)
from torchdoctor.diagnose.rules._loader_call import rewrite_call
from torchdoctor.diagnose.rules._loaders import collated_batch, heavy_collate, wait_share
from torchdoctor.diagnose.rules._measured import fastest, how

CODE = "D111"
TITLE = "Slow collate_fn: batches are assembled sample by sample in Python"
MIN_COLLATE_SHARE = 0.15  # of the step; a padding loop over bucketed text measured 21-28%
DEFAULT_COLLATE_OPS = 3  # trivial ops' time per sample the default collate takes (at most)


def check(run: RunObservation) -> list[Finding]:
    profile = step_profile(run)
    loaders = [ld for ld in training_loaders(run) if ld.num_workers == 0 and heavy_collate(run, ld)]
    if profile is None or not loaders:
        return []
    # heavy_collate measured both: a collate time and a batch size
    loader = max(loaders, key=lambda ld: ld.collate_s or 0.0)
    batch = collated_batch(loader) or 1
    data_s = profile.seconds("data") * wait_share(run, loader)
    collate_s = min(loader.collate_s or 0.0, data_s)  # one collate per batch, one batch per step
    share = clamp(collate_s / profile.step_s)
    if share < MIN_COLLATE_SHARE:
        return []
    default_s = DEFAULT_COLLATE_OPS * run.compute.dispatch_overhead_s * batch
    saving = clamp(max(0.0, collate_s - default_s) / profile.step_s)
    basis: SavingBasis = "estimated"
    saving_how = (
        f"collate_fn measured at {secs(collate_s)} per batch in the run; assumes whole-batch "
        f"ops take what the default collate takes ({DEFAULT_COLLATE_OPS} trivial ops per sample)"
    )
    measured = fastest(run, "data.collate")
    if measured is not None and measured.subject in ("", loader.location):
        if measured.ratio >= 1:
            return []  # a whole-batch collate returning the same batches measured no faster
        # both collates ran on the same samples in one thread, interleaved, in CPU time
        saving = clamp(share * (1 - measured.ratio))
        basis, saving_how = "measured", how(measured, "collating a batch")
    per_sample = collate_s / batch
    workers = suggested_workers(cpu_count(run, loader))
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity=severity_for(saving),
            saving=saving,
            evidence=[
                f"Collating a batch of {batch:.0f} took {secs(collate_s)} per step, "
                f"{pct(share)} of the {secs(profile.step_s)} step: {secs(per_sample)} per "
                f"sample, about {per_sample / run.compute.dispatch_overhead_s:.0f} trivial ops' "
                "worth (the default collate takes one to three).",
                f"The DataLoader at {loader.location} runs its collate_fn in the training "
                "process (num_workers=0).",
            ]
            + ([f"Measured: {saving_how}."] if basis == "measured" else []),
            fix=(
                "# build the batch with a few whole-batch ops, e.g. for variable-length samples:\n"
                "from torch.nn.utils.rnn import pad_sequence\n"
                "def collate(samples):\n"
                "    xs, ys = zip(*samples)\n"
                "    return pad_sequence(xs, batch_first=True), torch.as_tensor(ys)\n"
                "# or at least overlap yours with the step in worker processes:\n"
                + rewrite_call(loader, {"num_workers": str(workers), "persistent_workers": "True"})
            ),
            source="docs/techniques/vectorize-python-loops.md; PyTorch docs: torch.utils.data "
            "(collate_fn); PyTorch docs: torch.nn.utils.rnn.pad_sequence",
            explanation="The collate function assembles each batch one sample (or token) at a "
            "time in Python while the model waits; whole-batch ops do it at once.",
            details={
                "collate_s": loader.collate_s,
                "collate_share": share,  # of the step, this loader's data wait at most
                "step_s": profile.step_s,
                "default_collate_s": default_s,
                "location": loader.location,
            },
            saving_basis=basis,
            saving_how=saving_how,
        )
    ]
