"""TD136: an optimizer built with `foreach=False`."""

from __future__ import annotations

import libcst as cst

from torchdoctor.lint.patterns import (
    is_false,
    keyword,
    method_call,
    string_value,
    terminal_name,
    walk,
)
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
    """`torch.optim.AdamW(...)`, `dict(...)` of options, a helper named for the optimizer
    (`make_optimizer(..., foreach=False)`) or a function of the file that passes its own
    `foreach` on to one; not `clip_grad_norm_(..., foreach=False)`."""
    name = ctx.call_name(call) or ""
    if name.startswith("torch.optim.") or name == "builtins.dict":
        return True
    if name.startswith("torch."):
        return False
    callee = terminal_name(call.func) or ""
    return "optim" in callee.lower() or callee in _forwarding_functions(ctx)


def _forwarded_parameter(ctx, call: cst.Call, value: cst.BaseExpression) -> str | None:
    """The name of the function around `call` when `value` is that function's own parameter
    (`def make(params, foreach=False): return AdamW(params, foreach=foreach)`): the setting is
    decided where the function is called, or by its default."""
    function = ctx.enclosing(call, cst.FunctionDef)
    if function is None or not isinstance(value, cst.Name):
        return None
    parameters = function.params
    every = [*parameters.posonly_params, *parameters.params, *parameters.kwonly_params]
    return function.name.value if any(p.name.value == value.value for p in every) else None


def _forwarding_functions(ctx) -> set[str]:
    """Functions of the file that pass their own `foreach` parameter on to an optimizer."""
    if "td136_forwarding" not in ctx.memo:
        ctx.memo["td136_forwarding"] = {
            function
            for call in ctx.index.calls
            if (ctx.call_name(call) or "").startswith("torch.optim.")
            and (arg := keyword(call, "foreach")) is not None
            and (function := _forwarded_parameter(ctx, call, arg.value)) is not None
        }
    return ctx.memo["td136_forwarding"]


def _set_by_callers(ctx, function: str) -> bool:
    """Some call of `function` in the file passes `foreach=`: the finding belongs there."""
    return any(
        terminal_name(call.func) == function and keyword(call, "foreach") is not None
        for call in ctx.index.calls
    )


def _option_replaced_unguarded(ctx, nodes: list[cst.CSTNode]) -> bool:
    """Code under no `if` replaces or removes a `"foreach"` option (`OPTIM["foreach"] = True`,
    `cfg.optimizer_kwargs.pop("foreach")`, `del OPTIM["foreach"]`): a dict literal's
    `"foreach": False` is then only a placeholder."""
    for node in nodes:
        if ctx.enclosing(node, cst.If) is not None:
            continue
        if isinstance(node, cst.Call) and method_call(node, "pop") and node.args:
            if string_value(node.args[0].value) == "foreach":
                return True
        targets: list[cst.BaseExpression] = []
        if isinstance(node, cst.Assign) and not _off(ctx, node.value):
            targets = [t.target for t in node.targets]
        elif isinstance(node, cst.Del):
            targets = [node.target]
        for target in targets:
            if (
                isinstance(target, cst.Subscript)
                and len(target.slice) == 1
                and isinstance(target.slice[0].slice, cst.Index)
                and string_value(target.slice[0].slice.value) == "foreach"
            ):
                return True
    return False


class OptimizerForeachOff(Rule):
    """
    ## What it does
    Flags `foreach=False` given to a `torch.optim` optimizer: as a keyword of its constructor,
    of `dict(...)`, of a helper named for the optimizer (`make_optimizer(foreach=False)`) or of
    a function of the file that passes its own `foreach` on to one (once, where the value is
    decided: at the call that passes `False`, or at the default when no call passes it), or
    as the `"foreach": False` entry of a dict literal in a file that builds an optimizer (the
    options passed as `**kwargs` or from a config). Left alone: a setting under an `if` the
    file's defaults leave off, dict entries in a file whose code under no `if` replaces or
    removes the option (`OPTIM["foreach"] = True`, `kwargs.pop("foreach")`), and `foreach=False` of
    other functions (`clip_grad_norm_`).

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
            forwarded_by = _forwarded_parameter(ctx, call, arg.value)
            if forwarded_by is not None and _set_by_callers(ctx, forwarded_by):
                continue  # reported once, at the call that passes `foreach=False` in
            if _takes_optimizer_options(ctx, call):
                yield ctx.violation(self, arg, _MESSAGE)
        nodes = list(walk(ctx, ctx.module, skip_functions=False))
        if _option_replaced_unguarded(ctx, nodes):
            return
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
                if guarded_off(ctx, node):
                    continue
                yield ctx.violation(self, entry, _MESSAGE)


_MESSAGE = (
    "`foreach=False` makes the optimizer update its parameters one tensor at a time; "
    "leave it out (or pass `fused=True`) to update them all in a few kernels"
)
