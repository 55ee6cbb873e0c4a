"""D105: preparing each sample in `__getitem__` costs a large share of training on it.

## What it does
Flags a training dataset whose `__getitem__` work for one batch takes at least 40% as long as
the step's forward, backward and optimizer together, when data loading is at least 30% of the
step. It is measured where the loader runs in the training process (`num_workers=0`), and leaves
out datasets whose samples are only indexed from memory (rule D108). Rule D101 (workers) usually
fires beside it: workers hide the work, this rule's fix removes it.

## Why is this bad
Per-sample Python work (decoding, converting with NumPy in float64, normalising or augmenting
one sample at a time) repeats for every sample in every epoch. When it costs more than the
model's own compute, extra workers only spread the waste over more cores; when it costs less,
workers hide it but still burn a core on it. Doing deterministic work once, or random work on
whole batches, removes it. (When `__getitem__` only indexes in-memory tensors, D108 applies
instead.)

Estimated saving: nine tenths of the measured `__getitem__` time per batch, capped by the steady
data time per step (the tenth left covers indexing a cached sample).

## Example
```python
class Images(Dataset):
    def __getitem__(self, i):
        img = (self.imgs[i] / 255.) ** 0.8  # fixed work, redone every epoch, in float64
        img = random_flip(img)  # random augmentation, one sample at a time
        return torch.from_numpy(img).permute(2, 0, 1).float(), self.labels[i]
```

## Use instead
```python
class Images(Dataset):
    def __init__(self, imgs, labels):
        # fixed pre-processing once: one vectorised pass over the whole array
        x = torch.from_numpy(imgs).permute(0, 3, 1, 2).float().div_(255)
        self.imgs = x.pow_(0.8)
        self.labels = torch.as_tensor(labels)

    def __getitem__(self, i):
        return self.imgs[i], self.labels[i]

for x, y in loader:
    x = torch.where(torch.rand(len(x), 1, 1, 1) < 0.5, x.flip(-1), x)  # per batch
```

## Fix safety
Needs review: only deterministic work can be done once; random augmentation must stay per sample
(move it to worker processes or apply it to whole batches on the device). Caching the converted
dataset costs memory (float32 takes four times the bytes of uint8).
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import (
    COMPUTE_PHASES,
    clamp,
    cpu_count,
    median_phase_s,
    pct,
    secs,
    severity_for,
    step_profile,
    suggested_workers,
    training_loaders,
    typical_batch_size,
)
from torchdoctor.diagnose.rules._data_fixes import CACHED_ITEM_COST, cheaper_items_fix
from torchdoctor.diagnose.rules._loaders import in_memory

CODE = "D105"
TITLE = "Expensive per-sample work in Dataset.__getitem__"
# Per-sample work a third of the step, about 0.6x the model's compute, was said only as D101's
# workers (NumPy rolling features in __getitem__, PCM records unpacked sample by sample with
# `struct`): the work itself is the problem there too, and the fix that removes it is this rule's
MIN_DATA_SHARE = 0.3
MIN_ITEM_TO_COMPUTE = 0.4


def check(run: RunObservation) -> list[Finding]:
    profile = step_profile(run)
    measured = [
        ld
        for ld in training_loaders(run)
        if ld.num_workers == 0 and ld.item_s is not None and not in_memory(run, ld)
    ]
    if profile is None or not measured or profile.share("data") < MIN_DATA_SHARE:
        return []
    loader = measured[0]
    batch = loader.batch_size or typical_batch_size(run)
    if not batch:
        return []
    # item_s is a mean over every fetch; the steady data time caps it against one slow fetch
    item_batch_s = min(loader.item_s * batch, median_phase_s(run, "data"))
    compute_s = median_phase_s(run, *COMPUTE_PHASES)
    if item_batch_s < MIN_ITEM_TO_COMPUTE * compute_s:
        return []
    item_share = clamp(item_batch_s / profile.step_s)
    # never above the data wait: the loop cannot get back more than it waits for its batches
    saving = min(clamp(item_share * (1 - CACHED_ITEM_COST)), profile.share("data"))
    # an IterableDataset makes its samples in __iter__ (a generator), not __getitem__
    method = "__iter__" if loader.iterable_dataset else "__getitem__"
    # a dataset that returns whole batches (DLRM's random data, to a loader of batch_size=1):
    # each item holds more rows than one sample
    rows = typical_batch_size(run) or 0.0
    whole_batches = bool(loader.batch_size and rows > loader.batch_size)
    item = "item" if whole_batches else "sample"
    per_batch = f"{secs(item_batch_s)} per batch of {batch:.0f}"
    if whole_batches:
        per_batch += f" item(s) of {rows / batch:.0f} rows"
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity=severity_for(saving),
            saving=saving,
            evidence=[
                f"{method} of {loader.dataset_type or 'the dataset'} took "
                f"{secs(loader.item_s)} per {item}: {per_batch}, {pct(item_share)} of the step.",
                f"Forward, backward and optimizer together took {secs(compute_s)} in a typical "
                "step.",
            ],
            fix=cheaper_items_fix(suggested_workers(cpu_count(run, loader)), loader),
            source="docs/techniques/data-loading.md; docs/techniques/vectorize-python-loops.md",
            explanation="Each sample is prepared again every epoch, one at a time; fixed work "
            "done once, and random augmentation done per batch, remove most of that cost.",
            details={
                "item_s": loader.item_s,
                "item_batch_s": item_batch_s,
                "compute_s": compute_s,
                "location": loader.location,
            },
            saving_how=(
                f"{method} measured at {secs(item_batch_s / batch)} per {item} in the run; assumes "
                f"a cached {item} costs {CACHED_ITEM_COST:.0%} of that, at most the data wait "
                "per step (the rewrite is the program's own: not timed)"
            ),
        )
    ]
