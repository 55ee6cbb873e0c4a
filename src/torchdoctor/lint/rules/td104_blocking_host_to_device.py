"""TD104: a pinned batch copied to CUDA without `non_blocking=True`."""

from __future__ import annotations

import libcst as cst

from torchdoctor.lint.edits import add_keyword
from torchdoctor.lint.patterns import (
    DATALOADER,
    argument,
    batch_names,
    is_cuda_move,
    is_false,
    keyword,
    loader_call,
    method_call,
    names_in,
    positional,
    string_value,
    terminal_name,
    unwrap_iterable,
    walk,
)
from torchdoctor.lint.rule import Rule


class BlockingHostToDevice(Rule):
    """
    ## What it does
    Flags `.to(<cuda device>)` / `.cuda()` on the batches of a `DataLoader` created with
    `pin_memory` when the call lacks `non_blocking=True`. The loader may be built in the same
    function or passed in (`train(model, device, train_loader)` called with a loader built in
    the file), and pinned directly or through a `**kwargs` dict built in the file; from a
    pinned loader, `.to(device)` with a `device` parameter counts as a device copy. A batch
    name that the loop has already rebound (`x = x.cuda()`) holds a GPU tensor after that
    line and is left alone.

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
    any kernel that reads it, from unpinned memory it silently degrades to a blocking copy, and
    when the target is the CPU it does nothing.
    """

    code = "TD104"
    name = "blocking-host-to-device"
    fix_safety = "safe"

    def check(self, ctx):
        for loop in ctx.index.loops:
            if not isinstance(loop, cst.For):
                continue
            loader = loader_call(ctx, loop.iter) or _loader_passed_in(ctx, loop)
            if loader is None or not _pinned(ctx, loader):
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
        # From pinned memory any device copy may be asynchronous; `non_blocking` is a no-op
        # when the target turns out to be the CPU, so a device parameter is enough evidence.
        if not (is_cuda_move(ctx, call) or _to_device_parameter(ctx, call)):
            return False
        if keyword(call, "non_blocking") is not None:
            return False
        if any(a.star for a in call.args):
            return False
        if not isinstance(call.func, cst.Attribute):
            return False
        max_positional = 1 if call.func.attr.value == "cuda" else 2
        if len(positional(call)) > max_positional:
            return False
        receiver = call.func.value
        if isinstance(receiver, cst.Subscript):
            receiver = receiver.value
        return isinstance(receiver, cst.Name) and receiver.value in names


def _to_device_parameter(ctx, call: cst.Call) -> bool:
    """`x.to(device)` where `device` is a parameter of the enclosing function (the usual
    `train(model, device, loader)`), not a dtype."""
    if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "to"):
        return False
    target = argument(call, "device", 0)
    if not isinstance(target, cst.Name):
        return False
    function = ctx.enclosing(call, cst.FunctionDef)
    return function is not None and target.value in _parameter_names(function)


def _parameter_names(function: cst.FunctionDef) -> list[str]:
    params = function.params
    return [p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params]]


def _loader_passed_in(ctx, loop: cst.For) -> cst.Call | None:
    """The `DataLoader(...)` a function's loader parameter receives, when every call of the
    function in this file passes the same visible loader kind (all pinned or not is decided
    by the caller's loader, so one visible call is used)."""
    source = unwrap_iterable(ctx, loop.iter)
    function = ctx.enclosing(loop, cst.FunctionDef)
    if not isinstance(source, cst.Name) or function is None:
        return None
    names = _parameter_names(function)
    if source.value not in names:
        return None
    position = names.index(source.value)
    for call in ctx.index.calls:
        if not (isinstance(call.func, cst.Name) and call.func.value == function.name.value):
            continue
        passed = argument(call, source.value, position)
        if isinstance(passed, cst.Name):
            value = ctx.single_value(passed)
            if isinstance(value, cst.Call) and ctx.call_name(value) == DATALOADER:
                return value
    return None


def _pinned(ctx, loader: cst.Call) -> bool:
    """`pin_memory=True`, given directly or in a `**kwargs` dict built in this file
    (`kwargs = {...}`, `kwargs.update({...})`, `kwargs.update(other)`)."""
    pinned = argument(loader, "pin_memory", 7)
    if pinned is not None:
        return not is_false(pinned)
    for arg in loader.args:
        if arg.star == "**" and isinstance(arg.value, cst.Name):
            if _dict_pins(ctx, arg.value.value, depth=0):
                return True
    return False


def _dict_pins(ctx, name: str, depth: int) -> bool:
    if depth > 2:
        return False
    values = list(ctx.index.bindings.get(name, []))
    for call in ctx.index.calls:
        if method_call(call, "update") and terminal_name(call.func.value) == name and call.args:
            values.append(call.args[0].value)
    for value in values:
        if isinstance(value, cst.Name) and _dict_pins(ctx, value.value, depth + 1):
            return True
        if isinstance(value, cst.Dict):
            for element in value.elements:
                if (
                    isinstance(element, cst.DictElement)
                    and string_value(element.key) == "pin_memory"
                    and not is_false(element.value)
                ):
                    return True
    return False
