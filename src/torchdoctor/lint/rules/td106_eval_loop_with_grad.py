"""TD106: an evaluation loop that records autograd graphs."""

from __future__ import annotations

import re

import libcst as cst

from torchdoctor.lint.patterns import (
    calls_backward,
    calls_model,
    disables_grad_inside,
    grad_disabled_around,
    is_false,
    keyword,
    method_call,
    only_called_without_grad,
    unwrap_iterable,
    walk,
)
from torchdoctor.lint.rule import Rule

EVAL_DATA_RE = re.compile(
    r"(?<![a-z])(val|valid|validation|test|eval|evaluation|dev)"
    r"(?:_?(loader|dl|data|dataloader|set|ds|iter|batches|samples))?(?![a-z])"
)


def iterates_eval_data(ctx, loop: cst.For) -> bool:
    return bool(EVAL_DATA_RE.search(ctx.code(unwrap_iterable(ctx, loop.iter)).lower()))


EVAL_FUNCTION_WORDS = {"validate", "validation", "evaluate", "evaluation", "eval", "val", "valid"}
# calls that compute gradients or turn them on (not `torch.autograd.Variable`, a plain wrapper)
_GRADIENT_CALLS = (
    "torch.autograd.grad",
    "torch.autograd.backward",
    "torch.autograd.functional.",
    "torch.func.",
    "torch.enable_grad",
    "torch.set_grad_enabled",
)


def in_eval_function(ctx, loop: cst.CSTNode) -> bool:
    """The loop is in a function named for evaluation (`validate`, `run_eval`, `val_epoch`)
    that uses no gradient: it evaluates whatever it iterates over (`range(0, len(xs), bs)`
    over held-out tensors). A function that works with gradients (saliency,
    `torch.autograd.grad`, test-time adaptation) is not one."""
    function = ctx.enclosing(loop, cst.FunctionDef)
    words = set(function.name.value.lower().split("_")) if function is not None else set()
    if not words & EVAL_FUNCTION_WORDS:
        return False
    return not _uses_gradients(ctx, function, loop)


def _uses_gradients(ctx, function: cst.FunctionDef, loop: cst.CSTNode) -> bool:
    """The function computes or reads gradients, or the loop steps an optimizer:
    `torch.autograd.grad(...)`, `torch.func.grad`, `enable_grad`, `x.grad`,
    `x.requires_grad_()`, `requires_grad=True`, `.requires_grad = True`; `.step()` in the loop
    (a scheduler's `step(val_loss)` after it is evaluation's)."""
    if any(method_call(node, "step") for node in walk(ctx, loop)):
        return True
    for node in walk(ctx, function.body):
        if isinstance(node, cst.Call):
            name = ctx.call_name(node) or ""
            if name.startswith(_GRADIENT_CALLS) or method_call(node, "requires_grad_"):
                return True
            if (arg := keyword(node, "requires_grad")) is not None and not is_false(arg.value):
                return True
        elif isinstance(node, cst.Attribute) and node.attr.value == "grad":
            if not ctx.is_imported(node):  # `x.grad`, not `torch.func.grad`
                return True
        elif isinstance(node, cst.Assign):
            for target in node.targets:
                if isinstance(target.target, cst.Attribute):
                    if target.target.attr.value == "requires_grad":
                        return not is_false(node.value)
    return False


class EvalLoopWithGrad(Rule):
    """
    ## What it does
    Flags a loop over validation/test data (a loader named like `val_loader`, `test_dl`,
    `loaders["eval"]`), or any loop of a function named for evaluation (`validate`,
    `run_eval`, `val_epoch`, `train_evaluate`) whose body uses no gradient (no
    `torch.autograd.grad`, `.grad`, `requires_grad_()`, no `optimizer.step()` in the loop),
    that calls a model (`model(x)`, `self.net(x)`; passing a model to a
    helper or storing it does not count, nor does an encoder of data such as `cat_encoder`,
    `label_encoder`), never calls `backward()`, and runs neither under
    `torch.no_grad()` / `torch.inference_mode()`, nor in a function decorated with them, nor in
    a function that this file only ever calls under them.

    ## Why is this bad
    Without them every forward pass records the autograd graph and keeps activations alive for
    a backward pass that never comes: evaluation runs slower and needs far more memory.

    ## Example
    ```python
    model.eval()
    for x, y in val_loader:
        loss = criterion(model(x), y)
    ```

    ## Use instead
    ```python
    model.eval()
    with torch.inference_mode():
        for x, y in val_loader:
            loss = criterion(model(x), y)
    ```

    ## Fix safety
    No automatic fix: wrapping the loop changes indentation of the whole block and the author
    must confirm nothing in it needs gradients.
    """

    code = "TD106"
    name = "eval-loop-with-grad"

    def check(self, ctx):
        for loop in ctx.index.loops:
            if not isinstance(loop, cst.For):
                continue
            if not (iterates_eval_data(ctx, loop) or in_eval_function(ctx, loop)):
                continue
            if not calls_model(ctx, loop.body, direct=True) or calls_backward(ctx, loop.body):
                continue
            if grad_disabled_around(ctx, loop) or disables_grad_inside(ctx, loop.body):
                continue
            function = ctx.enclosing(loop, cst.FunctionDef)
            if function is not None and only_called_without_grad(ctx, function):
                continue
            yield ctx.violation(
                self,
                loop,
                "evaluation loop runs the model with autograd on; wrap "
                "it in `torch.inference_mode()` (or `torch.no_grad()`)",
            )
