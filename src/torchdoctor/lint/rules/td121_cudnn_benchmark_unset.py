"""TD121: a CUDA convolution training script that never sets `cudnn.benchmark`."""

from __future__ import annotations

import libcst as cst

from torchdoctor.lint.modules import LayerFinder
from torchdoctor.lint.patterns import is_cuda_move, method_call, receiver, walk
from torchdoctor.lint.rule import Rule

CONVOLUTIONS = tuple(f"torch.nn.Conv{n}d" for n in (1, 2, 3)) + tuple(
    f"torch.nn.ConvTranspose{n}d" for n in (1, 2, 3)
)
_CUDNN_SETTINGS = ("cudnn.benchmark", "cudnn.deterministic")
_WRAPPERS = {"torch.compile", "torch.nn.parallel.DistributedDataParallel", "torch.nn.DataParallel"}


class CudnnBenchmarkUnset(Rule):
    """
    ## What it does
    Flags the first convolution layer of a model that is moved to CUDA (`.cuda()`,
    `.to("cuda")`, `.to(device)` with a CUDA `device`) and trained, in a file that calls
    `backward()` and never assigns `torch.backends.cudnn.benchmark` (nor
    `cudnn.deterministic`, nor calls `torch.use_deterministic_algorithms`). The model must
    visibly be a convolutional one (an `nn.Sequential` holding a convolution, or an instance
    of a class of the file that builds one) and be called, passed to a helper, or have its
    parameters handed to an optimizer next to the move; a convolution in a test table, or a
    model that is only moved, is not enough.

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
        if not any(method_call(c, "backward") for c in ctx.index.calls) or self._configures_cudnn(
            ctx
        ):
            return
        finder = LayerFinder(ctx, CONVOLUTIONS.__contains__)
        for call in ctx.index.calls:
            if not is_cuda_move(ctx, call):
                continue
            conv = finder.find(call.func.value)
            holder = _holder(ctx, call)
            if conv is not None and holder is not None and _is_used(ctx, holder, call):
                yield ctx.violation(
                    self,
                    conv,
                    "CUDA convolution training without `torch.backends.cudnn.benchmark = True`",
                )
                return

    @staticmethod
    def _configures_cudnn(ctx) -> bool:
        for target, _ in ctx.index.attribute_assigns:
            name = ctx.qualified_name(target) or ctx.code(target)
            if name.endswith(_CUDNN_SETTINGS):
                return True
        return any(True for _ in ctx.calls_to("torch.use_deterministic_algorithms"))


def _holder(ctx, move: cst.Call) -> str | None:
    """The name the model moved by `move` is kept under: `model` for `model.cuda()` and for
    `model = Net().cuda()`, `self.net` for `self.net = Net().to("cuda")`."""
    moved = receiver(move)
    if isinstance(moved, (cst.Name, cst.Attribute)):
        return ctx.code(moved)
    parent = ctx.parent(move)
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
        target = parent.targets[0].target
        return ctx.code(target) if isinstance(target, (cst.Name, cst.Attribute)) else None
    return None


def _is_used(ctx, holder: str, move: cst.Call) -> bool:
    """Near the move (its class for `self.x`, else its function, else the module), the model
    is called, passed to a helper of this project (`train(model, ...)`) or a wrapper (DDP,
    `torch.compile`), or has its `.parameters()` handed to a `torch.optim` optimizer."""
    kinds = cst.ClassDef if holder.startswith("self.") else cst.FunctionDef
    scope = ctx.enclosing(move, kinds) or ctx.module
    for node in walk(ctx, scope, skip_functions=False):
        if not isinstance(node, cst.Call) or node is move:
            continue
        if ctx.code(node.func) == holder:
            return True
        callee = ctx.call_name(node) or ""
        takes_model = callee in _WRAPPERS or not ctx.is_imported(node.func)
        for arg in node.args:
            value = arg.value
            if callee.startswith("torch.optim.") and method_call(value, "parameters"):
                value = receiver(value)
            elif not takes_model:
                continue
            if isinstance(value, (cst.Name, cst.Attribute)) and ctx.code(value) == holder:
                return True
    return False
