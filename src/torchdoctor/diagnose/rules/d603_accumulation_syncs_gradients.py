"""D603: gradient accumulation all-reduces gradients on every micro-batch.

## What it does
Flags distributed runs with gradient accumulation (several `backward()` calls per optimizer step)
where the accumulation micro-steps synchronized gradients, i.e. did not run under
`model.no_sync()`.

## Why is this bad
DDP all-reduces gradients at the end of every `backward()`. While accumulating, only the last
micro-batch's all-reduce is needed; the others send the full gradient over the network for
nothing.

Estimated saving: the measured communication time per step times the share of micro-batches
that did not need it, `(k - 1) / k` for `k` micro-batches per step.

## Example
```python
for i, (x, y) in enumerate(loader):
    (criterion(model(x), y) / k).backward()
    if (i + 1) % k == 0:
        optimizer.step(); optimizer.zero_grad()
```

## Use instead
```python
for i, (x, y) in enumerate(loader):
    last = (i + 1) % k == 0
    with contextlib.nullcontext() if last else model.no_sync():
        (criterion(model(x), y) / k).backward()
    if last:
        optimizer.step(); optimizer.zero_grad()
```

## Fix safety
Safe: the accumulated gradient is the same; it is all-reduced once, on the last micro-batch.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import clamp, pct, secs, severity_for, step_profile

CODE = "D603"
TITLE = "Gradient accumulation without no_sync(): every micro-batch all-reduces"


def check(run: RunObservation) -> list[Finding]:
    dist = run.distributed
    profile = step_profile(run)
    if dist is None or profile is None or dist.world_size <= 1 or dist.micro_steps_syncing <= 0:
        return []
    micro = [s.micro_batches for s in run.steps if s.micro_batches > 1]
    if not micro:
        return []
    k = sum(micro) / len(micro)
    comm_share = clamp((dist.comm_s_per_step or 0.0) / profile.step_s)
    saving = clamp(comm_share * (k - 1) / k)
    evidence = [
        f"{k:g} micro-batches per optimizer step; {dist.micro_steps_syncing} accumulation "
        "micro-step(s) all-reduced gradients.",
    ]
    if dist.comm_s_per_step is not None:
        evidence.append(
            f"Communication took {secs(dist.comm_s_per_step)} per step ({pct(comm_share)})."
        )
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity=severity_for(saving) if dist.comm_s_per_step is not None else "info",
            saving=saving,
            evidence=evidence,
            fix="with contextlib.nullcontext() if last_micro_batch else model.no_sync():\n"
            "    loss.backward()",
            source="docs/techniques/gradient-accumulation.md; PyTorch docs: "
            "DistributedDataParallel.no_sync",
            explanation="Only the last micro-batch's gradients need to be all-reduced.",
            details={
                "micro_batches": k,
                "micro_steps_syncing": dist.micro_steps_syncing,
                "comm_share": comm_share,
            },
        )
    ]
