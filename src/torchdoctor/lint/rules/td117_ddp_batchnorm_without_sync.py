"""TD117: BatchNorm under DistributedDataParallel without SyncBatchNorm."""

from __future__ import annotations

import re

from torchdoctor.lint.rule import Rule

DDP = "torch.nn.parallel.DistributedDataParallel"
_BATCHNORM_RE = re.compile(r"^torch\.nn\.(BatchNorm[123]d|LazyBatchNorm[123]d)$")
# torchvision models that contain BatchNorm layers
_BN_MODELS_RE = re.compile(r"^torchvision\.models\.(resnet|resnext|wide_resnet|densenet|mobilenet|efficientnet"
                           r"|regnet|inception|googlenet|shufflenet|mnasnet|convnext_|vgg\d+_bn)")


class DdpBatchNormWithoutSync(Rule):
    """
    ## What it does
    Flags `DistributedDataParallel(...)` in a file that builds BatchNorm layers
    (`nn.BatchNorm1d/2d/3d`, or a torchvision model that has them) and never calls
    `nn.SyncBatchNorm.convert_sync_batchnorm`.

    ## Why is this bad
    Under DDP each process normalizes with the statistics of its own slice of the batch: with
    small per-GPU batches the statistics are noisy, the running averages differ between ranks,
    and accuracy drops compared to single-GPU training with the same global batch.

    ## Example
    ```python
    model = Net()  # contains nn.BatchNorm2d
    model = DistributedDataParallel(model.to(rank), device_ids=[rank])
    ```

    ## Use instead
    ```python
    model = nn.SyncBatchNorm.convert_sync_batchnorm(Net())
    model = DistributedDataParallel(model.to(rank), device_ids=[rank])
    ```

    ## Fix safety
    No automatic fix: SyncBatchNorm adds a collective per BatchNorm layer; with large
    per-GPU batches the author may prefer local statistics.
    """

    code = "TD117"
    name = "ddp-batchnorm-without-sync"
    level = "error"

    def check(self, ctx):
        ddp_calls = list(ctx.calls_to(DDP))
        if not ddp_calls:
            return
        names = [ctx.qualified_name(c.func) or "" for c in ctx.index.calls]
        if any("SyncBatchNorm" in n for n in names) or "SyncBatchNorm" in ctx.source:
            return
        if not any(_BATCHNORM_RE.match(n) or _BN_MODELS_RE.match(n) for n in names):
            return
        for call in ddp_calls:
            yield ctx.violation(self, call, "model with BatchNorm wrapped in DistributedDataParallel "
                                "without `nn.SyncBatchNorm.convert_sync_batchnorm`")
