"""TD103: DataLoader feeding CUDA without pinned memory."""

from __future__ import annotations

import libcst as cst

from torchdoctor.lint.patterns import (
    DATALOADER,
    argument,
    file_moves_to_cuda,
    has_star_args,
    method_call,
    walk,
)
from torchdoctor.lint.rule import Rule

_INDEX_SOURCES = {"builtins.range", "torch.arange", "torch.randperm"}


def _index_batches(ctx, dataset) -> bool:
    """The loader batches indices (`range(n)`, `torch.arange(n)`, `mask.nonzero()...`): a few
    kilobytes per batch, where pinning gains nothing measurable."""
    if isinstance(dataset, cst.Name):
        dataset = ctx.single_value(dataset)
    if dataset is None:
        return False
    calls = [n for n in [dataset, *walk(ctx, dataset)] if isinstance(n, cst.Call)]
    return any(
        ctx.call_name(c) in _INDEX_SOURCES or method_call(c, "nonzero", "arange") for c in calls
    )


class DataLoaderNoPinMemory(Rule):
    """
    ## What it does
    Flags `DataLoader(...)` without `pin_memory` in a file that moves data to CUDA
    (`.cuda()` or `.to(<cuda device>)`). Loaders that batch indices (`range(n)`,
    `torch.arange(n)`, `mask.nonzero()`) are left alone: their batches are too small to gain.

    ## Why is this bad
    Copies from pageable host memory to the GPU are staged and synchronous. Batches in pinned
    (page-locked) memory copy faster and, with `non_blocking=True`, overlap with compute.
    Alone, pinning saves one host copy per batch, a few percent at most on typical batch
    sizes: the rule is at `info` level and off by default (`--select TD103`).

    ## Example
    ```python
    loader = DataLoader(dataset, batch_size=64, num_workers=4)
    for x, y in loader:
        x, y = x.to("cuda"), y.to("cuda")
    ```

    ## Use instead
    ```python
    loader = DataLoader(dataset, batch_size=64, num_workers=4, pin_memory=True)
    for x, y in loader:
        x, y = x.to("cuda", non_blocking=True), y.to("cuda", non_blocking=True)
    ```

    ## Fix safety
    No automatic fix: pinning memory on a machine without CUDA only produces a warning, but
    whether the script always runs on CUDA is a decision for its author
    (`pin_memory=torch.cuda.is_available()` is a portable choice).
    """

    code = "TD103"
    name = "dataloader-no-pin-memory"
    # Pinning alone saves one host-side staging copy per batch: a few percent at most on
    # typical batch sizes. The large gain (copies overlapping compute) needs non_blocking
    # copies too, which TD104 checks where the loader is pinned.
    level = "info"
    default_enabled = False

    def check(self, ctx):
        loaders = [c for c in ctx.calls_to(DATALOADER) if not has_star_args(c)]
        if not loaders or not file_moves_to_cuda(ctx):
            return
        for call in loaders:
            if _index_batches(ctx, argument(call, "dataset", 0)):
                continue
            if argument(call, "pin_memory", 7) is None:
                yield ctx.violation(
                    self,
                    call,
                    "`DataLoader` without `pin_memory` in a script that "
                    "copies batches to CUDA; set `pin_memory=True`",
                )
