"""TD121: a CUDA convolution training script that never sets `cudnn.benchmark`."""

from __future__ import annotations

from torchdoctor.lint.patterns import file_moves_to_cuda, method_call
from torchdoctor.lint.rule import Rule

CONVOLUTIONS = tuple(f"torch.nn.Conv{n}d" for n in (1, 2, 3)) + tuple(f"torch.nn.ConvTranspose{n}d" for n in (1, 2, 3))
_CUDNN_SETTINGS = ("cudnn.benchmark", "cudnn.deterministic")


class CudnnBenchmarkUnset(Rule):
    """
    ## What it does
    Flags the first convolution layer of a file that trains (`backward()`), moves data to CUDA
    and never assigns `torch.backends.cudnn.benchmark` (nor `cudnn.deterministic`, nor calls
    `torch.use_deterministic_algorithms`).

    ## Why is this bad
    With `benchmark = True` cuDNN times the available convolution algorithms for each new input
    shape once and keeps the fastest; the default heuristic choice is often noticeably slower
    for fixed-size inputs, which is the usual case in training.

    ## Example
    ```python
    model = nn.Sequential(nn.Conv2d(3, 16, 3), nn.ReLU()).cuda()
    for x, y in loader:
        ...
    ```

    ## Use instead
    ```python
    torch.backends.cudnn.benchmark = True  # input sizes do not change between steps
    model = nn.Sequential(nn.Conv2d(3, 16, 3), nn.ReLU()).cuda()
    for x, y in loader:
        ...
    ```

    ## Fix safety
    No automatic fix: with input sizes that change every step benchmarking re-runs for each
    new shape and can slow training down; it also makes runs non-deterministic.
    """

    code = "TD121"
    name = "cudnn-benchmark-unset"

    def check(self, ctx):
        convs = list(ctx.calls_to(*CONVOLUTIONS))
        if not convs or not any(method_call(c, "backward") for c in ctx.index.calls):
            return
        if self._configures_cudnn(ctx) or not file_moves_to_cuda(ctx):
            return
        yield ctx.violation(self, convs[0], "CUDA convolution training without "
                            "`torch.backends.cudnn.benchmark = True`")

    @staticmethod
    def _configures_cudnn(ctx) -> bool:
        for target, _ in ctx.index.attribute_assigns:
            name = ctx.qualified_name(target) or ctx.code(target)
            if name.endswith(_CUDNN_SETTINGS):
                return True
        return any(True for _ in ctx.calls_to("torch.use_deterministic_algorithms"))
