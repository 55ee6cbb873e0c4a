from __future__ import annotations

import libcst as cst

from torchdoctor.lint.patterns import exclusive_branches, method_call, terminal_name, walk
from torchdoctor.lint.rule import Rule
from torchdoctor.lint.steps import guarded_in


class ZeroGradBetweenBackwardAndStep(Rule):
    """
    ## What it does
    Flags `zero_grad()` called after a `backward()` and before the `step()` that should use
    those gradients, in the same loop body or function (no other `backward()` in between):
    `optimizer.step()` of the same receiver, or any `*opt*.step()` after `model.zero_grad()`.
    Also through a helper of the file called there (`self.after_backward()` between
    `backward()` and `step()`, whose body calls `model.zero_grad()` under no `if` and calls no
    `backward()` or `step()` of its own: a monitoring hook that clears what it inspected).

    ## Why is this bad
    `zero_grad()` drops the gradients `backward()` just computed (sets them to `None`, the
    default since torch 2.0, or to zeros): `step()` then has nothing to apply and the model
    does not learn (with weight decay or momentum it drifts instead). This is a correctness
    error.

    ## Example
    ```python
    loss.backward()
    optimizer.zero_grad()
    optimizer.step()
    ```

    ## Use instead
    ```python
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    ```

    ## Fix safety
    No automatic fix: where the call belongs (before the forward, or after `step()`) depends
    on the loop, e.g. on gradient accumulation.
    """

    code = "TD124"
    name = "zero-grad-between-backward-and-step"

    def check(self, ctx):
        for call in ctx.index.calls:
            if not method_call(call, "zero_grad"):
                continue
            scope = ctx.enclosing(call, (cst.For, cst.While, cst.FunctionDef))
            if scope is None:
                scope = ctx.module
            if _drops_gradients_before_step(ctx, call, scope):
                yield ctx.violation(
                    self,
                    call,
                    "`zero_grad()` between `backward()` and `step()` drops the gradients "
                    "before the step uses them; call it before `backward()`",
                )
                continue
            site = _helper_called_before_step(ctx, call)
            if site is not None:
                yield ctx.violation(
                    self,
                    call,
                    f"`zero_grad()` in `{terminal_name(site.func)}()`, which the training loop "
                    "calls between `backward()` and `step()`, drops the gradients before the "
                    "step uses them",
                )


def _helper_called_before_step(ctx, zero: cst.Call) -> cst.Call | None:
    """A call of the function `zero` sits in (under no `if` there; a function that calls no
    `backward()` or `step()` itself) made between a `backward()` and a `step()`."""
    function = ctx.enclosing(zero, cst.FunctionDef)
    if function is None or guarded_in(ctx, zero, function):
        return None
    if any(method_call(n, "backward", "step") for n in walk(ctx, function.body)):
        return None
    for site in ctx.index.calls:
        if terminal_name(site.func) != function.name.value or ctx.is_inside(site, function):
            continue
        scope = ctx.enclosing(site, (cst.For, cst.While, cst.FunctionDef)) or ctx.module
        if _drops_gradients_before_step(ctx, site, scope):
            return site
    return None


def _receiver(ctx, call: cst.Call) -> str:
    func = call.func
    return ctx.code(func.value) if isinstance(func, cst.Attribute) else ""


def _drops_gradients_before_step(ctx, zero: cst.Call, scope: cst.CSTNode) -> bool:
    """A backward() before `zero` and a step() after it in `scope`, with no backward() between
    `zero` and that step, none of them in branches that exclude each other."""
    zero_line = ctx.line(zero)
    receiver = _receiver(ctx, zero)
    backwards, steps = [], []
    for node in walk(ctx, scope):
        if not isinstance(node, cst.Call) or exclusive_branches(ctx, node, zero):
            continue
        if method_call(node, "backward"):
            backwards.append(ctx.line(node))
        elif method_call(node, "step"):
            step_receiver = _receiver(ctx, node)
            if step_receiver == receiver or "opt" in step_receiver.lower():
                steps.append(ctx.line(node))
    if not any(line < zero_line for line in backwards):
        return False
    later_steps = [line for line in steps if line > zero_line]
    if not later_steps:
        return False
    first_step = min(later_steps)
    return not any(zero_line < line < first_step for line in backwards)
