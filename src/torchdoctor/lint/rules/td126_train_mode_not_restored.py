from __future__ import annotations

import re

import libcst as cst

from torchdoctor.lint.patterns import (
    argument,
    calls_backward,
    method_call,
    receiver,
    terminal_name,
    walk,
)
from torchdoctor.lint.rule import Rule


class TrainModeNotRestored(Rule):
    """
    ## What it does
    Flags `model.eval()` (or `model.train(False)`) called inside a training loop (a loop that
    also calls `backward()`), directly or in a function that loop calls, in a file that never
    calls `.train()` (nor `.train(True)` / `.train(mode)`): after the first evaluation the
    model stays in eval mode for every later training step. Also flags, in such a file, the
    `.eval()` of a model an optimizer trains run before the training loop (directly, or in a
    function of the file called there with that model: a sample printed before training);
    a frozen teacher or target network, which no optimizer trains, is left alone; and the
    `self.model.eval()` that building an object of the file's class runs before the loop (in
    its `__init__`/`__post_init__`, `__enter__` or a method they call, such as an export check
    or a sanity check of `with Trainer(model) as t:`). An averaged copy
    (`ema.eval()`,
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
        reported = set()
        for call in calls:
            if not _sets_eval(call) or _AVERAGED_COPY_RE.search(ctx.code(call.func)):
                continue
            function = ctx.enclosing(call, cst.FunctionDef)
            in_loop = any(ctx.is_inside(call, loop) for loop in training_loops)
            if in_loop or (function is not None and function.name.value in called):
                reported.add(id(call))
                yield ctx.violation(
                    self,
                    call,
                    f"`.{'eval()' if method_call(call, 'eval') else 'train(False)'}` inside "
                    "the training loop and `.train()` nowhere in this file: every later "
                    "training step runs in eval mode",
                )
        for call in _trained_model_switched_before_training(ctx, training_loops):
            if id(call) not in reported:
                reported.add(id(call))
                yield ctx.violation(
                    self,
                    call,
                    "the trained model is put in eval mode before the training loop (here) and "
                    "`.train()` is nowhere in this file: every training step runs in eval mode",
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


def _trained_models(ctx) -> set[str]:
    """The code of every model whose parameters an optimizer updates (`self.model` of
    `torch.optim.Adam(self.model.parameters(), ...)`)."""
    trained = set()
    for call in ctx.index.calls:
        if not (ctx.call_name(call) or "").startswith("torch.optim.") or not call.args:
            continue
        first = call.args[0].value
        if isinstance(first, cst.Call) and method_call(first, "parameters"):
            assert isinstance(first.func, cst.Attribute)
            trained.add(ctx.code(first.func.value))
    return trained


def _trained_model_switched_before_training(ctx, training_loops) -> list[cst.Call]:
    """`.eval()` of a model an optimizer trains, run before a training loop of the same function:
    directly (`self.model.eval()`), or by a function of this file called there with the model
    (`generate(self.model, ...)` whose `model.eval()` is never undone). A frozen teacher or
    target network (`teacher.eval()`) is no optimizer's: left alone."""
    trained = _trained_models(ctx)
    if not trained:
        return []
    functions = {f.name.value: f for f in ctx.index.functions}
    found = []
    for loop in training_loops:
        container = ctx.enclosing(loop, cst.FunctionDef) or ctx.module
        start = ctx.line(loop)
        body = container if isinstance(container, cst.Module) else container.body
        for call in walk(ctx, body):
            if not isinstance(call, cst.Call) or ctx.line(call) >= start:
                continue
            if _sets_eval(call) and ctx.code(receiver(call)) in trained:
                found.append(call)
                continue
            helper = functions.get(terminal_name(call.func) or "")
            if helper is not None and isinstance(call.func, cst.Name):
                found += _switches_of_passed_model(ctx, helper, call, trained)
            if isinstance(call.func, cst.Name):
                found += _switches_while_constructing(ctx, call.func.value, trained)
        # a training loop in a method of a class: its constructor (or `__enter__`, for `with
        # Trainer(model) as t: t.fit(...)`) ran first
        owner = ctx.enclosing(container, cst.ClassDef)
        if owner is not None:
            found += _switches_while_constructing(ctx, owner.name.value, trained)
    return found


_CONSTRUCTORS = ("__init__", "__post_init__", "__enter__")


def _switches_while_constructing(ctx, class_name: str, trained: set[str]) -> list[cst.Call]:
    """The `self.model.eval()` calls of trained models that building an instance of the
    file's class `class_name` runs: in its `__init__`/`__post_init__` or a method of the class
    they call (`self.check_export()`)."""
    classes = [c for c in ctx.index.classes if c.name.value == class_name]
    if len(classes) != 1:
        return []
    methods = {
        f.name.value: f for f in ctx.index.functions if ctx.enclosing(f, cst.ClassDef) is classes[0]
    }
    pending = [methods[name] for name in _CONSTRUCTORS if name in methods]
    seen: set[int] = set()
    evals = []
    while pending:
        method = pending.pop()
        if id(method) in seen:
            continue
        seen.add(id(method))
        for node in walk(ctx, method.body):
            if not isinstance(node, cst.Call):
                continue
            if _sets_eval(node) and _is_trained(ctx, receiver(node), trained):
                evals.append(node)
            elif (
                isinstance(node.func, cst.Attribute)
                and terminal_name(node.func.value) == "self"
                and node.func.attr.value in methods
            ):
                pending.append(methods[node.func.attr.value])
    return evals


def _switches_of_passed_model(ctx, helper: cst.FunctionDef, call: cst.Call, trained: set[str]):
    """The `param.eval()` calls of `helper` whose parameter receives a trained model here."""
    params = [p.name.value for p in helper.params.params]
    evals = []
    for node in walk(ctx, helper.body):
        if not (isinstance(node, cst.Call) and _sets_eval(node)):
            continue
        name = terminal_name(receiver(node))
        if not isinstance(receiver(node), cst.Name) or name not in params:
            continue
        passed = argument(call, name, params.index(name))
        if passed is not None and ctx.code(passed) in trained:
            evals.append(node)
    return evals


def _inside_loop(ctx, loop: cst.CSTNode) -> bool:
    """`loop` is nested in another loop of the same function (the outer one is the training
    loop)."""
    for ancestor in ctx.ancestors(loop):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
            return False
        if isinstance(ancestor, (cst.For, cst.While)):
            return True
    return False


def _is_trained(ctx, model: cst.BaseExpression, trained: set[str]) -> bool:
    """`model` is a trained model's code, or `self.<name>` of a model an optimizer built in
    the same class trains by that name (`self.model` for `Adam(model.parameters())` after
    `self.model = model`)."""
    code = ctx.code(model)
    if code in trained:
        return True
    return (
        isinstance(model, cst.Attribute)
        and terminal_name(model.value) == "self"
        and model.attr.value in {t.rsplit(".", 1)[-1] for t in trained}
    )
