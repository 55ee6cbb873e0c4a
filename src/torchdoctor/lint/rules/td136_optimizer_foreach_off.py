"""TD136: an optimizer built with `foreach=False`."""

from __future__ import annotations

import libcst as cst

from torchdoctor.lint.patterns import is_false, keyword, string_value, terminal_name, walk
from torchdoctor.lint.rule import Rule
from torchdoctor.lint.switches import guarded_off, truth


def _builds_optimizer(ctx) -> bool:
    """The file constructs a `torch.optim` optimizer (by name, or `getattr(torch.optim, ...)`)."""
    return any(
        (ctx.call_name(call) or "").startswith("torch.optim.")
        and (terminal_name(call.func) or "")[:1].isupper()
        for call in ctx.index.calls
    ) or ("torch.optim" in ctx.source and "getattr" in ctx.source)


def _off(ctx, value: cst.BaseExpression) -> bool:
    return is_false(value) or truth(ctx, value) is False


def _takes_optimizer_options(ctx, call: cst.Call) -> bool:
    """`torch.optim.AdamW(...)`, `dict(...)` of options, or a helper named for the optimizer
    (`make_optimizer(..., foreach=False)`); not `clip_grad_norm_(..., foreach=False)`."""
    name = ctx.call_name(call) or ""
    if name.startswith("torch.optim.") or name == "builtins.dict":
        return True
    return "optim" in (terminal_name(call.func) or "").lower() and not name.startswith("torch.")


def _overwritten_unguarded(ctx, entry: cst.DictElement, assigns: list[cst.Assign]) -> bool:
    """`OPTIM = {"foreach": False}` followed by `OPTIM["foreach"] = True` under no `if`: the
    literal is only a placeholder."""
    statement = ctx.parent(ctx.parent(entry))
    if not (isinstance(statement, cst.Assign) and len(statement.targets) == 1):
        return False
    name = terminal_name(statement.targets[0].target)
    for assign in assigns:
        for target in assign.targets:
            sub = target.target
            if (
                isinstance(sub, cst.Subscript)
                and terminal_name(sub.value) == name
                and len(sub.slice) == 1
                and isinstance(sub.slice[0].slice, cst.Index)
                and string_value(sub.slice[0].slice.value) == "foreach"
                and not _off(ctx, assign.value)
                and ctx.enclosing(assign, cst.If) is None
            ):
                return True
    return False


class OptimizerForeachOff(Rule):
    """
    ## What it does
    Flags `foreach=False` given to a `torch.optim` optimizer: as a keyword of its constructor,
    of `dict(...)` or of a helper named for the optimizer (`make_optimizer(foreach=False)`), or
    as the `"foreach": False` entry of a dict literal in a file that builds an optimizer (the
    options passed as `**kwargs` or from a config). Left alone: a setting under an `if` the
    file's defaults leave off, a dict entry that code under no `if` overwrites with another
    value, and `foreach=False` of other functions (`clip_grad_norm_`).

    ## Why is this bad
    With `foreach=False` the optimizer updates its parameters one tensor at a time: a Python
    loop that launches a few small kernels per parameter and per state tensor. On a GPU the
    default multi-tensor (`foreach`) path, or `fused=True`, updates all of them in a handful
    of launches; a model with hundreds of small tensors (norms, biases) spends much of its step
    in that loop. On a CPU the default is the per-tensor loop too, and `foreach=True` or
    `fused=True` (Adam, AdamW, SGD, Adagrad) is what speeds it up.

    ## Example
    ```python
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=False)
    ```

    ## Use instead
    ```python
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)  # or fused=True
    ```

    ## Fix safety
    No automatic fix: the multi-tensor path holds temporaries for all parameters at once (more
    peak memory, sometimes why it was turned off) and may round differently in the last bits.
    """

    code = "TD136"
    name = "optimizer-foreach-off"

    def check(self, ctx):
        if "foreach" not in ctx.source or not _builds_optimizer(ctx):
            return
        for call in ctx.index.calls:
            arg = keyword(call, "foreach")
            if arg is None or not _off(ctx, arg.value) or guarded_off(ctx, call):
                continue
            if _takes_optimizer_options(ctx, call):
                yield ctx.violation(self, arg, _MESSAGE)
        nodes = list(walk(ctx, ctx.module, skip_functions=False))
        assigns = [n for n in nodes if isinstance(n, cst.Assign)]
        for node in nodes:
            if not isinstance(node, cst.Dict):
                continue
            for entry in node.elements:
                if not (
                    isinstance(entry, cst.DictElement)
                    and string_value(entry.key) == "foreach"
                    and _off(ctx, entry.value)
                ):
                    continue
                if guarded_off(ctx, node) or _overwritten_unguarded(ctx, entry, assigns):
                    continue
                yield ctx.violation(self, entry, _MESSAGE)


_MESSAGE = (
    "`foreach=False` makes the optimizer update its parameters one tensor at a time; "
    "leave it out (or pass `fused=True`) to update them all in a few kernels"
)
