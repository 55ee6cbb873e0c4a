from __future__ import annotations

import libcst as cst

from torchdoctor.lint.patterns import exclusive_branches, method_call, walk
from torchdoctor.lint.rule import Rule


class ZeroGradBetweenBackwardAndStep(Rule):
    """
    ## What it does
    Flags `zero_grad()` called after a `backward()` and before the `step()` that should use
    those gradients, in the same loop body or function (no other `backward()` in between):
    `optimizer.step()` of the same receiver, or any `*opt*.step()` after `model.zero_grad()`.

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
