"""D604: one rank is slower than the others, and every other rank waits for it.

## What it does
Compares the ranks of a multi-process run (`torchrun ... diagnose --rank-dir DIR`): each rank's
median step time minus its gradient communication time is the time it was busy with its own
work. A rank is a straggler when it was busier than the other ranks in at least 80% of the steps
(paired step by step: noise makes one rank busier in about half of them) and at least 5% longer
than the other ranks' median (and 1 ms longer than the median rank); when the steps could not be paired, busy at least 10% longer.
A busy machine inflates every rank's step alike, so a fixed extra time per step is not judged
against a relative margin it can sit near.

## Why is this bad
DDP all-reduces gradients every step, and an all-reduce ends only when the slowest rank joins.
Every other rank idles in the all-reduce for the straggler, so the whole job runs at the speed of
its slowest rank. The other ranks' own step times hide it: their waiting is booked as
communication, which is why the rule subtracts it.

Estimated saving: the straggler's extra busy time over the median of the other ranks, the wait
each of them incurs, as a share of the slowest rank's step.

## Example
```python
if dist.get_rank() == 0:
    writer.add_histogram("weights", model.module.fc.weight, step)  # only rank 0, every step
loader = DataLoader(dataset, batch_size=64)  # one rank reads slower storage, or a bigger shard
```

## Use instead
```python
if dist.get_rank() == 0 and step % 500 == 0:  # rank-only extras rarely, off the step
    writer.add_histogram("weights", model.module.fc.weight, step)
sampler = DistributedSampler(dataset)  # equal shards per rank
loader = DataLoader(dataset, batch_size=64, sampler=sampler, num_workers=4)
```

## Fix safety
Needs review: the cause is specific to the slow rank (rank-0-only logging or checkpointing, its
data pipeline, a throttled or shared device); compare that rank's own report or breakdown.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import clamp, median, pct, secs, severity_for

CODE = "D604"
TITLE = "A straggler rank: the other ranks wait for it in every all-reduce"
MARGIN = 0.10  # busy this much longer than the median rank: a straggler, not noise
MIN_EXCESS_S = 1e-3
# with per-step pairs: busier than the other ranks in this share of the steps (noise: about
# half), and at least MIN_SHARE longer than the median rank. A busy machine inflates every
# rank's step alike, so a fixed extra time per step sat near a relative margin (CI, round 6)
CONSISTENT = 0.8
MIN_SHARE = 0.05


def busy_seconds(run: RunObservation) -> list[float] | None:
    """Per rank: median step time minus communication (waiting for the others counts as comm)."""
    dist = run.distributed
    if dist is None or len(dist.per_rank_step_s) < 2:
        return None
    comm = dist.per_rank_comm_s
    if len(comm) != len(dist.per_rank_step_s):
        comm = [0.0] * len(dist.per_rank_step_s)
    return [max(0.0, step - c) for step, c in zip(dist.per_rank_step_s, comm)]


def _straggles(run: RunObservation, slow: int, busy: list[float], others_s: float) -> bool:
    """The slowest rank is a straggler, not noise: busier in nearly every step (a count) and
    MIN_SHARE longer than the other ranks' median, when the steps were paired across ranks;
    else busy MARGIN longer than the median rank."""
    shares = run.distributed.per_rank_slower_share if run.distributed else []
    if len(shares) == len(busy):
        return shares[slow] >= CONSISTENT and busy[slow] >= others_s * (1 + MIN_SHARE)
    return busy[slow] > median(busy) * (1 + MARGIN)


def check(run: RunObservation) -> list[Finding]:
    busy = busy_seconds(run)
    if busy is None:
        return []
    slow = max(range(len(busy)), key=busy.__getitem__)
    typical = median(busy)
    others = median([b for rank, b in enumerate(busy) if rank != slow])
    excess = busy[slow] - others
    if busy[slow] - typical < MIN_EXCESS_S or not _straggles(run, slow, busy, others):
        return []
    step_s = max(run.distributed.per_rank_step_s)
    saving = clamp(excess / step_s) if step_s > 0 else 0.0
    evidence = [
        f"Rank {slow} was busy {secs(busy[slow])} per step; the other ranks {secs(others)} "
        f"(median), so they wait about {secs(excess)} per step ({pct(saving)}) in the all-reduce.",
        "Busy time per rank (step minus communication): "
        + ", ".join(f"rank {rank}: {secs(b)}" for rank, b in enumerate(busy))
        + ".",
    ]
    shares = run.distributed.per_rank_slower_share if run.distributed else []
    if len(shares) == len(busy):
        evidence.append(
            f"Rank {slow} was the busier in {pct(shares[slow])} of the steps, step by step."
        )
    if not run.distributed.per_rank_comm_s:
        evidence.append("Communication was not timed: the step times themselves differ.")
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity=severity_for(saving),
            saving=saving,
            evidence=evidence,
            fix=f"# look at rank {slow}'s own work per step: rank-only logging/checkpointing,\n"
            "# its data pipeline, its device; give every rank an equal shard:\n"
            "sampler = DistributedSampler(dataset)\n"
            "loader = DataLoader(dataset, batch_size=64, sampler=sampler, num_workers=4)",
            source="docs/techniques/syncbatchnorm-ddp.md; PyTorch docs: Distributed Data Parallel "
            "notes (all-reduce waits for every rank)",
            explanation="An all-reduce finishes only when the slowest rank joins, so the job runs "
            "at the pace of its slowest rank.",
            details={"rank": slow, "busy_s": busy, "excess_s": excess},
        )
    ]
