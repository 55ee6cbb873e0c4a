"""D601: the model is wrapped in `nn.DataParallel` instead of DistributedDataParallel.

## What it does
Flags models wrapped in `torch.nn.DataParallel`.

## Why is this bad
DataParallel runs all GPUs from one Python process: every step it copies the parameters to each
GPU, scatters the batch, runs the replicas in threads that contend for the GIL, gathers every
output on GPU 0 and reduces every gradient there. GPU 0 becomes the bottleneck and the others wait.
DistributedDataParallel runs one process per GPU and overlaps the gradient all-reduce with the
backward pass; PyTorch recommends it even on a single machine.

Estimated saving: 25% of the step, a conservative reading of the commonly reported 1.3x-2x
speedups from DataParallel to DDP (the single-process run cannot measure it directly). On a run
without CUDA, DataParallel only calls the module: information, with no saving.

## Example
```python
model = nn.DataParallel(model).cuda()
```

## Use instead
```python
# launched with: torchrun --nproc_per_node=NUM_GPUS train.py
torch.distributed.init_process_group("nccl")
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
model = nn.parallel.DistributedDataParallel(model.cuda(local_rank), device_ids=[local_rank])
sampler = DistributedSampler(dataset)  # each rank reads its own shard
```

## Fix safety
Needs review: the script must be launched with torchrun, give each rank its own data shard
(`DistributedSampler`, with `set_epoch`), and save/log from rank 0 only. The per-GPU batch stays
the same, so the effective batch is unchanged.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import on_cuda

CODE = "D601"
TITLE = "nn.DataParallel instead of DistributedDataParallel"
ASSUMED_SAVING = 0.25


def check(run: RunObservation) -> list[Finding]:
    wrapped = [m for m in run.models if m.wrapper == "DataParallel"]
    if not wrapped:
        return []
    evidence = [
        f"{m.class_name} at {m.location or 'an unknown line'} is wrapped in "
        "nn.DataParallel (single process, GIL-bound, gathers on GPU 0)."
        for m in wrapped
    ]
    gpu = on_cuda(run)
    if not gpu:  # without CUDA, DataParallel just calls the module: nothing to save here
        evidence.append(
            "This run had no CUDA device, where DataParallel only calls the module: "
            "no effect on this run's speed; it matters on several GPUs."
        )
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity="warning" if gpu else "info",
            saving=ASSUMED_SAVING if gpu else 0.0,
            evidence=evidence,
            fix=(
                "# torchrun --nproc_per_node=NUM_GPUS train.py\n"
                'torch.distributed.init_process_group("nccl")\n'
                'local_rank = int(os.environ["LOCAL_RANK"]); torch.cuda.set_device(local_rank)\n'
                "model = nn.parallel.DistributedDataParallel(model.cuda(local_rank), "
                "device_ids=[local_rank])"
            ),
            source="docs/techniques/syncbatchnorm-ddp.md; PyTorch docs: CUDA semantics (use "
            "DistributedDataParallel instead of DataParallel)",
            explanation="DataParallel drives every GPU from one GIL-bound process and funnels "
            "outputs and gradients through GPU 0.",
            details={"models": [m.class_name for m in wrapped]},
        )
    ]
