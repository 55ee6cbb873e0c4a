"""TD117: BatchNorm under DistributedDataParallel without SyncBatchNorm."""

from __future__ import annotations

import re

from torchdoctor.lint.modules import LayerFinder
from torchdoctor.lint.patterns import argument
from torchdoctor.lint.rule import Rule

DDP = "torch.nn.parallel.DistributedDataParallel"
_BATCHNORM_RE = re.compile(r"^torch\.nn\.(BatchNorm[123]d|LazyBatchNorm[123]d)$")
# torchvision models that contain BatchNorm layers
_BN_MODELS_RE = re.compile(
    r"^torchvision\.models\.(resnet|resnext|wide_resnet|densenet|mobilenet|efficientnet"
    r"|regnet|inception|googlenet|shufflenet|mnasnet|convnext_|vgg\d+_bn)"
)


def is_batchnorm(name: str) -> bool:
    return bool(_BATCHNORM_RE.match(name) or _BN_MODELS_RE.match(name))


class DdpBatchNormWithoutSync(Rule):
    """
    ## What it does
    Flags `DistributedDataParallel(model, ...)` when `model` is known to contain BatchNorm
    layers and the file never calls `nn.SyncBatchNorm.convert_sync_batchnorm`. Known means:
    the wrapped expression is (through assignments, `.to(...)`/`.cuda()`) an instance of a
    class defined in the same file whose body builds `nn.BatchNorm1d/2d/3d` (directly or
    through other classes and functions of the file), an `nn.Sequential(...)` holding one, or a
    torchvision model that has them. A model whose layers are not visible in the file (a
    parameter, an imported factory) is left alone.

    ## Why is this bad
    Under DDP each process normalizes with the statistics of its own slice of the batch: with
    small per-GPU batches (a few samples, as in detection and segmentation) the statistics are
    noisy, the running averages differ between ranks, and accuracy drops compared to
    single-GPU training with the same global batch. With large per-GPU batches (32 or more)
    local statistics are usually fine and many recipes skip SyncBatchNorm on purpose, because
    it adds a collective per BatchNorm layer: the per-GPU batch size decides, which the code
    rarely shows, so the rule is at `info` level and off by default (`--select TD117`).

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
    level = "info"
    default_enabled = False
    name = "ddp-batchnorm-without-sync"

    def check(self, ctx):
        ddp_calls = list(ctx.calls_to(DDP))
        if not ddp_calls or "SyncBatchNorm" in ctx.source:
            return
        finder = LayerFinder(ctx, is_batchnorm)
        for call in ddp_calls:
            if finder.find(argument(call, "module", 0)) is not None:
                yield ctx.violation(
                    self,
                    call,
                    "model with BatchNorm wrapped in DistributedDataParallel "
                    "without `nn.SyncBatchNorm.convert_sync_batchnorm`",
                )
