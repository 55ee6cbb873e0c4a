"""D602: BatchNorm under DistributedDataParallel without SyncBatchNorm.

## What it does
Flags distributed runs (more than one rank) of a DDP-wrapped model with BatchNorm layers that were
not converted to `SyncBatchNorm`. It is a warning when each rank sees fewer than 32 samples per
batch, otherwise information.

## Why is this bad
Each rank normalises with the statistics of its own slice of the batch. With small per-GPU
batches those statistics are noisy, which hurts accuracy and makes results depend on the number of
GPUs; the running statistics also differ between ranks.

Estimated saving: none (0); SyncBatchNorm adds communication, and the fix is about the quality of
the statistics.

## Example
```python
model = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
```

## Use instead
```python
model = nn.SyncBatchNorm.convert_sync_batchnorm(model)  # before wrapping in DDP
model = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
```

## Fix safety
Changes semantics: normalisation uses the global batch, which changes training (usually for the
better with small per-GPU batches) and costs an all-reduce per BatchNorm layer.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import typical_batch_size

CODE = "D602"
TITLE = "BatchNorm under DDP without SyncBatchNorm"
SMALL_PER_RANK_BATCH = 32


def check(run: RunObservation) -> list[Finding]:
    world = run.distributed.world_size if run.distributed else run.environment.world_size
    plain_bn = [
        m
        for m in run.models
        if m.wrapper == "DistributedDataParallel" and m.batchnorm_layers > m.sync_batchnorm_layers
    ]
    if world <= 1 or not plain_bn:
        return []
    per_rank = run.distributed.per_rank_batch if run.distributed else []
    batch = min(per_rank) if per_rank else typical_batch_size(run)
    layers = sum(m.batchnorm_layers - m.sync_batchnorm_layers for m in plain_bn)
    evidence = [
        f"{layers} BatchNorm layer(s) normalise per rank across {world} ranks.",
    ]
    if batch:
        evidence.append(f"Each rank sees {batch:.0f} samples per batch.")
    small = batch is not None and batch < SMALL_PER_RANK_BATCH
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity="warning" if small else "info",
            saving=0.0,
            evidence=evidence,
            fix="model = nn.SyncBatchNorm.convert_sync_batchnorm(model)  # before DDP\n"
            "model = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])",
            source="docs/techniques/syncbatchnorm-ddp.md; PyTorch docs: torch.nn.SyncBatchNorm",
            explanation="Without SyncBatchNorm each GPU normalises with the statistics of its "
            "own small slice of the batch.",
            changes_semantics=True,
            details={"world_size": world, "batchnorm_layers": layers, "per_rank_batch": batch},
        )
    ]
