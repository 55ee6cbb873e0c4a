from __future__ import annotations

import re

import libcst as cst

from torchdoctor.lint.patterns import calls_backward, method_call, terminal_name, walk
from torchdoctor.lint.rule import Rule


class TrainModeNotRestored(Rule):
    """
    ## What it does
    Flags `model.eval()` (or `model.train(False)`) called inside a training loop (a loop that
    also calls `backward()`), directly or in a function that loop calls, in a file that never
    calls `.train()` (nor `.train(True)` / `.train(mode)`): after the first evaluation the
    model stays in eval mode for every later training step. An averaged copy (`ema.eval()`,
    `self.ema.ema_model.eval()`, `swa_model.eval()`) is left alone: averaging, not
    `backward()`, updates it.

    ## Why is this bad
    In eval mode Dropout is off and BatchNorm normalises with frozen running statistics: every
    epoch after the first trains a different model from the one the code describes, usually
    overfitting or diverging. This is a correctness error.

    ## Example
    ```python
    def evaluate(model, loader):
        model.eval()
        ...

    for epoch in range(epochs):
        for x, y in train_loader:
            criterion(model(x), y).backward()
            ...
        evaluate(model, val_loader)
    ```

    ## Use instead
    ```python
    for epoch in range(epochs):
        model.train()
        for x, y in train_loader:
            criterion(model(x), y).backward()
            ...
        evaluate(model, val_loader)
    ```

    ## Fix safety
    No automatic fix: `model.train()` belongs at the start of each training epoch (or at the
    end of the evaluation function), which the author places.
    """

    code = "TD126"
    name = "train-mode-not-restored"
    level = "error"

    def check(self, ctx):
        calls = ctx.index.calls
        if any(method_call(c, "train") and not _sets_eval(c) for c in calls):
            return
        training_loops = [
            loop
            for loop in ctx.index.loops
            if calls_backward(ctx, loop.body) and not _inside_loop(ctx, loop)
        ]
        if not training_loops:
            return
        called = {
            terminal_name(node.func)
            for loop in training_loops
            for node in walk(ctx, loop.body)
            if isinstance(node, cst.Call)
        }
        for call in calls:
            if not _sets_eval(call) or _AVERAGED_COPY_RE.search(ctx.code(call.func)):
                continue
            function = ctx.enclosing(call, cst.FunctionDef)
            in_loop = any(ctx.is_inside(call, loop) for loop in training_loops)
            if in_loop or (function is not None and function.name.value in called):
                yield ctx.violation(
                    self,
                    call,
                    f"`.{'eval()' if method_call(call, 'eval') else 'train(False)'}` inside "
                    "the training loop and `.train()` nowhere in this file: every later "
                    "training step runs in eval mode",
                )


# an averaged copy of the model (EMA, SWA) is updated by averaging, never by backward(): eval
# mode is right for it
_AVERAGED_COPY_RE = re.compile(r"(^|[._])(ema|swa|averaged)([._]|$)", re.IGNORECASE)


def _sets_eval(call: cst.Call) -> bool:
    """`x.eval()` or `x.train(False)` (also `mode=False`): the call switches to eval mode."""
    if method_call(call, "eval"):
        return not call.args
    if not method_call(call, "train") or len(call.args) != 1:
        return False
    value = call.args[0].value
    return isinstance(value, cst.Name) and value.value == "False"


def _inside_loop(ctx, loop: cst.CSTNode) -> bool:
    """`loop` is nested in another loop of the same function (the outer one is the training loop)."""
    for ancestor in ctx.ancestors(loop):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
            return False
        if isinstance(ancestor, (cst.For, cst.While)):
            return True
    return False
