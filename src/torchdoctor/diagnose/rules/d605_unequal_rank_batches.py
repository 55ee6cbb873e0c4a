"""D605: the ranks train on batches of different sizes.

## What it does
Compares the median batch size per step of every rank of a multi-process run (`torchrun ...
diagnose --rank-dir DIR`) and flags a run where they differ.

## Why is this bad
Every step ends with an all-reduce that waits for all ranks, so the rank with the largest batch
sets the pace and the others idle. DDP also averages gradients over ranks, not over samples: a
sample on a rank with a smaller batch weighs more than one on a rank with a larger batch, so the
update is not the one a single process would compute on the combined batch.

Estimated saving: the non-communication part of the step times `1 - mean / max` of the per-rank
batch sizes: with equal shares, the largest batch shrinks to the mean.

## Example
```python
# each rank builds its own split, e.g. by a list slice that is uneven
indices = list(range(rank, len(dataset), world_size))[: 1000 + 200 * rank]
loader = DataLoader(Subset(dataset, indices), batch_size=32 * (rank + 1))
```

## Use instead
```python
sampler = DistributedSampler(dataset, drop_last=True)  # equal shards per rank
loader = DataLoader(dataset, batch_size=32, sampler=sampler)
```

## Fix safety
Needs review: equal batches change which samples each rank sees and, when the total batch
changes, the learning rate that suits it.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import clamp, pct, severity_for

CODE = "D605"
TITLE = "Unequal batch sizes across ranks"


def check(run: RunObservation) -> list[Finding]:
    dist = run.distributed
    if dist is None or len(dist.per_rank_batch) < 2 or len(set(dist.per_rank_batch)) < 2:
        return []
    batches = dist.per_rank_batch
    largest = max(batches)
    mean = sum(batches) / len(batches)
    step_s = max(dist.per_rank_step_s) if dist.per_rank_step_s else 0.0
    comm_s = dist.comm_s_per_step or 0.0
    work_share = clamp((step_s - comm_s) / step_s) if step_s > 0 else 1.0
    saving = clamp(work_share * (1 - mean / largest))
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity=severity_for(saving),
            saving=saving,
            evidence=[
                "Samples per step by rank: "
                + ", ".join(f"rank {rank}: {b}" for rank, b in enumerate(batches))
                + ".",
                f"The rank with {largest} samples sets the pace; equal shares of {mean:g} would "
                f"save about {pct(saving)} of the step.",
            ],
            fix="sampler = DistributedSampler(dataset, drop_last=True)  # equal shards\n"
            "loader = DataLoader(dataset, batch_size=per_rank_batch, sampler=sampler)",
            source="PyTorch DistributedSampler docs; PyTorch DDP notes (gradients averaged "
            "over ranks)",
            explanation="The largest batch sets every step's pace, and DDP's per-rank average "
            "weighs samples unequally when the batches differ.",
            changes_semantics=True,
            details={"per_rank_batch": batches},
        )
    ]
