"""TD106: an evaluation loop that records autograd graphs."""

from __future__ import annotations

import re

import libcst as cst

from torchdoctor.lint.patterns import (
    calls_backward,
    calls_model,
    disables_grad_inside,
    grad_disabled_around,
    only_called_without_grad,
    unwrap_iterable,
)
from torchdoctor.lint.rule import Rule

EVAL_DATA_RE = re.compile(
    r"(?<![a-z])(val|valid|validation|test|eval|evaluation|dev)"
    r"(?:_?(loader|dl|data|dataloader|set|ds|iter|batches|samples))?(?![a-z])"
)


def iterates_eval_data(ctx, loop: cst.For) -> bool:
    return bool(EVAL_DATA_RE.search(ctx.code(unwrap_iterable(ctx, loop.iter)).lower()))


EVAL_FUNCTION_WORDS = {"validate", "validation", "evaluate", "evaluation", "eval", "val", "valid"}


def in_eval_function(ctx, loop: cst.CSTNode) -> bool:
    """The loop is in a function named for evaluation (`validate`, `run_eval`, `val_epoch`):
    it evaluates whatever it iterates over (`range(0, len(xs), bs)` over held-out tensors)."""
    function = ctx.enclosing(loop, cst.FunctionDef)
    words = set(function.name.value.lower().split("_")) if function is not None else set()
    return bool(words & EVAL_FUNCTION_WORDS)


class EvalLoopWithGrad(Rule):
    """
    ## What it does
    Flags a loop over validation/test data (a loader named like `val_loader`, `test_dl`,
    `loaders["eval"]`), or any loop of a function named for evaluation (`validate`,
    `run_eval`, `val_epoch`), that calls a model (`model(x)`, `self.net(x)`; passing a model to a
    helper or storing it does not count), never calls `backward()`, and runs neither under
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
