"""TD106: an evaluation loop that records autograd graphs."""

from __future__ import annotations

import re

import libcst as cst

from torchdoctor.lint.patterns import (
    GRAD_OFF_CONTEXTS,
    calls_backward,
    calls_model,
    grad_disabled_around,
    terminal_name,
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


class EvalLoopWithGrad(Rule):
    """
    ## What it does
    Flags a loop over validation/test data (a loader named like `val_loader`, `test_dl`,
    `loaders["eval"]`) that calls a model (`model(x)`, `self.net(x)`; passing a model to a
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
            if not isinstance(loop, cst.For) or not iterates_eval_data(ctx, loop):
                continue
            if not calls_model(ctx, loop.body, direct=True) or calls_backward(ctx, loop.body):
                continue
            if grad_disabled_around(ctx, loop) or self._disables_inside(ctx, loop):
                continue
            if self._only_called_without_grad(ctx, loop):
                continue
            yield ctx.violation(
                self,
                loop,
                "evaluation loop runs the model with autograd on; wrap "
                "it in `torch.inference_mode()` (or `torch.no_grad()`)",
            )

    @staticmethod
    def _only_called_without_grad(ctx, loop) -> bool:
        """The loop's function is called in this file, and always under no_grad/inference_mode."""
        function = ctx.enclosing(loop, cst.FunctionDef)
        if function is None:
            return False
        calls = [c for c in ctx.index.calls if terminal_name(c.func) == function.name.value]
        return bool(calls) and all(grad_disabled_around(ctx, c) for c in calls)

    @staticmethod
    def _disables_inside(ctx, loop) -> bool:
        for node in walk(ctx, loop.body):
            if isinstance(node, cst.With):
                for item in node.items:
                    target = item.item.func if isinstance(item.item, cst.Call) else item.item
                    if ctx.qualified_name(target) in GRAD_OFF_CONTEXTS:
                        return True
        return False
