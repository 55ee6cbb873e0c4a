"""TD104: a pinned batch copied to CUDA without `non_blocking=True`."""

from __future__ import annotations

import libcst as cst

from torchdoctor.lint.edits import add_keyword
from torchdoctor.lint.patterns import (
    argument,
    batch_names,
    is_cuda_move,
    is_false,
    keyword,
    loader_call,
    names_in,
    positional,
    walk,
)
from torchdoctor.lint.rule import Rule


class BlockingHostToDevice(Rule):
    """
    ## What it does
    Flags `.to(<cuda device>)` / `.cuda()` on the batches of a `DataLoader` created with
    `pin_memory` when the call lacks `non_blocking=True`. A batch name that the loop has
    already rebound (`x = x.cuda()`) holds a GPU tensor after that line and is left alone.

    ## Why is this bad
    Pinned memory exists so that host-to-device copies can run asynchronously; a blocking copy
    makes the CPU wait for each transfer, so the copy cannot overlap with queued GPU work and
    the pinning buys little.

    ## Example
    ```python
    loader = DataLoader(dataset, batch_size=64, num_workers=4, pin_memory=True)
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
    Safe: a non-blocking copy from pinned memory is ordered on the current CUDA stream before
    any kernel that reads it, and from unpinned memory it silently degrades to a blocking copy.
    """

    code = "TD104"
    name = "blocking-host-to-device"
    fix_safety = "safe"

    def check(self, ctx):
        for loop in ctx.index.loops:
            if not isinstance(loop, cst.For):
                continue
            loader = loader_call(ctx, loop.iter)
            pinned = argument(loader, "pin_memory", 7) if loader is not None else None
            if pinned is None or is_false(pinned):
                continue
            names = batch_names(ctx, loop)
            rebinds: list[
                tuple[cst.Assign, set[str]]
            ] = []  # `x = x.cuda()`: x is on the GPU after it
            for node in walk(ctx, loop.body):
                if isinstance(node, cst.Assign) and not isinstance(node.value, cst.Name):
                    rebinds.append((node, {n for t in node.targets for n in names_in(t.target)}))
                if not isinstance(node, cst.Call):
                    continue
                host = names - {
                    n for assign, bound in rebinds if not ctx.is_inside(node, assign) for n in bound
                }
                if self._blocking_batch_copy(ctx, node, host):
                    fix = ctx.make_fix(
                        self.fix_safety,
                        "Add `non_blocking=True`",
                        {node: add_keyword(node, "non_blocking", "True")},
                    )
                    yield ctx.violation(
                        self,
                        node,
                        "copy of a pinned batch to CUDA without "
                        "`non_blocking=True` blocks the host",
                        fix,
                    )

    @staticmethod
    def _blocking_batch_copy(ctx, call: cst.Call, names: set[str]) -> bool:
        if not is_cuda_move(ctx, call) or keyword(call, "non_blocking") is not None:
            return False
        if any(a.star for a in call.args):
            return False
        max_positional = 1 if call.func.attr.value == "cuda" else 2
        if len(positional(call)) > max_positional:
            return False
        receiver = call.func.value
        if isinstance(receiver, cst.Subscript):
            receiver = receiver.value
        return isinstance(receiver, cst.Name) and receiver.value in names
