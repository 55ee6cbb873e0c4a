"""D501: peak memory is above 90% of the device's capacity.

## What it does
Flags runs whose peak memory (CUDA allocator peak, or the process's resident memory on CPU) is 90%
or more of the device's memory.

## Why is this bad
Near the limit, a slightly longer sequence or larger batch ends in an out-of-memory crash, and
the CUDA caching allocator starts freeing and re-allocating (or fragmenting) blocks, which slows
every step. It also leaves no room for the larger batch or the extra workers other fixes suggest.

Estimated saving: none (0) in step time; the fix buys headroom.

## Example
```python
for x, y in loader:  # batch of 256 at 97% of GPU memory
    loss = criterion(model(x), y)
    loss.backward()
```

## Use instead
```python
# 1. mixed precision halves activation memory
with torch.autocast("cuda", dtype=torch.bfloat16):
    loss = criterion(model(x), y)
# 2. recompute activations instead of storing them
from torch.utils.checkpoint import checkpoint
h = checkpoint(self.block, h, use_reentrant=False)
# 3. or smaller micro-batches with gradient accumulation (same effective batch)
for micro_x, micro_y in zip(x.chunk(2), y.chunk(2)):
    (criterion(model(micro_x), micro_y) / 2).backward()
```

## Fix safety
Safe in results for activation checkpointing and accumulation (checkpointing costs about a third
more compute); mixed precision changes numerics slightly. BatchNorm sees smaller batches with
micro-batching.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import gib, memory_use, pct, uses_autocast

CODE = "D501"
TITLE = "Peak memory above 90% of capacity"
MAX_USE = 0.90


def check(run: RunObservation) -> list[Finding]:
    use = memory_use(run)
    if use is None or use < MAX_USE:
        return []
    m = run.memory
    evidence = [
        f"Peak memory was {gib(m.peak_bytes)} of {gib(m.capacity_bytes)} ({pct(use)}, "
        f"measured by {m.source}).",
    ]
    if m.activations_bytes:
        evidence.append(f"Activations took about {gib(m.activations_bytes)}.")
    remedies = []
    if not uses_autocast(run) and run.environment.device_type == "cuda":
        remedies.append(
            'with torch.autocast("cuda", dtype=torch.bfloat16): ...  # halves activations'
        )
    if not any(mo.activation_checkpointing for mo in run.models):
        remedies.append("h = torch.utils.checkpoint.checkpoint(block, h, use_reentrant=False)")
    remedies.append("# or halve the micro-batch and accumulate gradients over 2 micro-batches")
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity="warning",
            saving=0.0,
            evidence=evidence,
            fix="\n".join(remedies),
            source="docs/techniques/activation-checkpointing.md; "
            "docs/techniques/gradient-accumulation.md; docs/techniques/mixed-precision.md",
            explanation="Memory this close to the limit risks out-of-memory crashes and "
            "allocator thrashing.",
            details={
                "memory_use": use,
                "peak_bytes": m.peak_bytes,
                "capacity_bytes": m.capacity_bytes,
            },
        )
    ]
