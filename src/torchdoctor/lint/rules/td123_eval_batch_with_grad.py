"""TD123: an evaluation function that runs the model once, with autograd on."""

from __future__ import annotations

import libcst as cst

from torchdoctor.lint.patterns import (
    calls_backward,
    calls_model,
    disables_grad_inside,
    grad_disabled_around,
    is_plain_function,
    method_call,
    only_called_without_grad,
    walk,
)
from torchdoctor.lint.rule import Rule
from torchdoctor.lint.rules.td107_eval_without_model_eval import EVAL_FUNCTION_RE


class EvalBatchWithGrad(Rule):
    """
    ## What it does
    Flags a function named like an evaluation (`evaluate`, `validate`, `predict`, `test`...)
    that calls the model outside any loop (the whole evaluation set, graph or batch in one
    call), never calls `backward()` or steps an optimizer, and runs neither under
    `torch.no_grad()` / `torch.inference_mode()` (decorator or `with` block) nor only from
    callers that disable gradients. Methods are left alone (frameworks such as Lightning
    disable gradients around `validation_step`); loops are TD106's.

    ## Why is this bad
    With autograd on, the forward pass records the graph and keeps every intermediate
    activation of the whole input alive until the function returns, for a backward pass that
    never comes: evaluation needs as much memory as a training step on the full set (often
    more than the training batches), and runs slower.

    ## Example
    ```python
    def test():
        model.eval()
        out = model(data.x, data.edge_index)
        return (out.argmax(1) == data.y).float().mean().item()
    ```

    ## Use instead
    ```python
    @torch.no_grad()
    def test():
        model.eval()
        out = model(data.x, data.edge_index)
        return (out.argmax(1) == data.y).float().mean().item()
    ```

    ## Fix safety
    No automatic fix: a caller may still need gradients of what the function returns.
    """

    code = "TD123"
    name = "eval-batch-with-grad"

    def check(self, ctx):
        for function in ctx.index.functions:
            if not EVAL_FUNCTION_RE.match(function.name.value):
                continue
            if not is_plain_function(ctx, function) or not calls_model(
                ctx, function.body, direct=True
            ):
                continue
            if _model_called_in_loop(ctx, function) or _trains(ctx, function.body):
                continue
            if grad_disabled_around(ctx, function.body) or disables_grad_inside(ctx, function.body):
                continue
            if only_called_without_grad(ctx, function):
                continue
            yield ctx.violation(
                self,
                function.name,
                f"`{function.name.value}()` runs the model with autograd on and keeps the "
                "activations of the whole input; decorate it with `@torch.no_grad()`",
            )


def _model_called_in_loop(ctx, function: cst.FunctionDef) -> bool:
    return any(
        isinstance(node, (cst.For, cst.While)) and calls_model(ctx, node.body, direct=True)
        for node in walk(ctx, function.body)
    )


def _trains(ctx, body: cst.CSTNode) -> bool:
    return calls_backward(ctx, body) or any(method_call(n, "step") for n in walk(ctx, body))
