"""TD134: the torch profiler records every step of the training."""

from __future__ import annotations

import libcst as cst

from torchdoctor.lint.patterns import (
    argument,
    is_false,
    method_call,
    receiver,
    terminal_name,
    walk,
)
from torchdoctor.lint.rule import Rule
from torchdoctor.lint.steps import LOOPS, is_step_loop, step_loop_around
from torchdoctor.lint.switches import guarded, guarded_off, truth

_PROFILERS = ("torch.profiler.profile", "torch.autograd.profiler.profile")


class ProfilerRecordsEveryStep(Rule):
    """
    ## What it does
    Flags `torch.profiler.profile(...)` without a `schedule=` (and the legacy
    `torch.autograd.profiler.profile(...)`, which has none) that stays on around the training
    steps: a `with` block (of the call or of the name it is assigned to) whose body runs a
    training loop (one that calls `backward()` or `optimizer.step()`, or a function of the file
    that runs one), a profiler assigned to a name whose `.start()` is called in a function
    (or module) that then runs such a loop, or one kept on an object (`self.prof =
    profile(...)`, a callback's) that is started, whose `.step()` runs on every training step
    (also through a loop over callbacks) and that nothing stops while training. A profiler under
    an `if` that names profiling (`if args.profile:`) and that the file's defaults do not turn
    on, enabled by such a switch (`profile(args.enable_profiling)`), or on a
    switch the file leaves off is an explicit choice and is left alone, and so are
    `enabled=False` and `**kwargs` that may hold a schedule.

    ## Why is this bad
    Without a schedule the profiler records every operator of every step (with shapes, stacks
    or memory when asked) for the whole run: each step gets slower, and the trace it keeps in
    memory grows until the profiler stops. A profile needs a few steps, not the training.

    ## Example
    ```python
    with torch.profiler.profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
    ```

    ## Use instead
    ```python
    schedule = torch.profiler.schedule(wait=1, warmup=1, active=5, repeat=1)
    with torch.profiler.profile(activities=[ProfilerActivity.CPU], schedule=schedule) as prof:
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            prof.step()
    ```

    ## Fix safety
    No automatic fix: which steps to profile, and whether to profile at all, is the author's
    choice.
    """

    code = "TD134"
    name = "profiler-records-every-step"

    def check(self, ctx):
        for call in ctx.calls_to(*_PROFILERS):
            enabled = argument(call, "enabled", 0)
            if argument(call, "schedule", 99) is not None or is_false(enabled):
                continue
            if enabled is not None and "profil" in (terminal_name(enabled) or "").lower():
                continue  # `profile(args.enable_profiling)`: on when asked for, as `if args.profile:`
            if not _star_arguments_known_without_schedule(ctx, call):
                continue  # `**kwargs` that may hold a schedule
            if _opted_in(ctx, call) or guarded(ctx, call):
                continue
            if not _covers_training(ctx, call):
                continue
            yield ctx.violation(
                self,
                call,
                "the profiler records every training step (no `schedule=`): every step gets "
                "slower and its trace grows; profile a few steps with a schedule",
            )


def _opted_in(ctx, node: cst.CSTNode) -> bool:
    """`node` sits under an `if` that names profiling (`if args.profile:`) and that the file's
    defaults do not turn on: profiling when asked for. A switch on by default (`profile: bool
    = True`) profiles every run."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.If) and "profil" in ctx.code(ancestor.test).lower():
            return truth(ctx, ancestor.test) is not True
    return False


def _star_arguments_known_without_schedule(ctx, call: cst.Call) -> bool:
    """No `*args`/`**kwargs`, or only `**name` where `name` is one dict literal without a
    `"schedule"` key."""
    for arg in call.args:
        if arg.star == "*":
            return False
        if arg.star == "**":
            value = ctx.single_value(arg.value)
            if not isinstance(value, cst.Dict):
                return False
            for element in value.elements:
                key = getattr(element, "key", None)
                if not isinstance(key, cst.SimpleString) or key.evaluated_value == "schedule":
                    return False
    return True


def _covers_training(ctx, call: cst.Call) -> bool:
    parent = ctx.parent(call)
    if isinstance(parent, cst.WithItem):
        return _runs_training(ctx, ctx.parent(parent))
    if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1):
        return False
    name = parent.targets[0].target
    if isinstance(name, cst.Attribute) and _stepped_by_training(ctx, name):
        return True
    if not isinstance(name, cst.Name):
        return False
    for node in ctx.index.calls:
        if method_call(node, "start") and _names(node.func.value, name.value):
            scope = ctx.enclosing(node, cst.FunctionDef)
            body = scope.body if scope is not None else ctx.module
            if _runs_training(ctx, body, after=ctx.line(node)):
                return True
    return any(
        isinstance(node, cst.With)
        and any(_names(item.item, name.value) for item in node.items)
        and _runs_training(ctx, node)
        for node in walk(ctx, ctx.module, skip_functions=False)
    )


def _stepped_by_training(ctx, target: cst.Attribute) -> bool:
    """A profiler kept on an object (`self.prof = profile(...)`, a callback's) is started,
    its `.step()` runs on every training step (a step loop calls it, or a function that loop
    calls), and it is never stopped there: it records the whole run."""

    def calls_on_target(method: str) -> list[cst.Call]:
        return [
            c
            for c in ctx.index.calls
            if method_call(c, method) and _same_attribute(c.func.value, target)
        ]

    if not calls_on_target("start"):
        return False
    stepped = any(_runs_per_step(ctx, c) for c in calls_on_target("step"))
    stopped_while_training = any(
        (_runs_per_step(ctx, c) or _in_function_with_step(ctx, c, target))
        and not guarded_off(ctx, c)  # `if DEBUG_STOP:` off by the file's defaults never runs
        for c in calls_on_target("stop")
    )
    return stepped and not stopped_while_training


def _runs_per_step(ctx, node: cst.CSTNode) -> bool:
    """`node` runs on every training step: in a step loop, or in a function called there,
    also through a loop over callbacks (`for cb in callbacks: cb.on_step_end()`)."""
    if step_loop_around(ctx, node) is not None:
        return True
    function = ctx.enclosing(node, cst.FunctionDef)
    if function is None:
        return False
    for call in ctx.index.calls:
        if terminal_name(call.func) != function.name.value or ctx.is_inside(call, function):
            continue
        for ancestor in ctx.ancestors(call):
            if isinstance(ancestor, (cst.If, cst.FunctionDef)):
                break
            if isinstance(ancestor, LOOPS) and is_step_loop(ctx, ancestor):
                return True
    return False


def _in_function_with_step(ctx, stop: cst.Call, target: cst.Attribute) -> bool:
    """`stop` sits in the function that steps the profiler (`if seen == 5: prof.stop()`)."""
    function = ctx.enclosing(stop, cst.FunctionDef)
    return function is not None and any(
        isinstance(n, cst.Call) and method_call(n, "step") and _same_attribute(receiver(n), target)
        for n in walk(ctx, function.body)
    )


def _same_attribute(expr: cst.BaseExpression, target: cst.Attribute) -> bool:
    """`self.prof` and `self.prof`: the same attribute of the same name."""
    return (
        isinstance(expr, cst.Attribute)
        and expr.attr.value == target.attr.value
        and terminal_name(expr.value) == terminal_name(target.value)
    )


def _names(expr: cst.BaseExpression, name: str) -> bool:
    return isinstance(expr, cst.Name) and expr.value == name


def _runs_training(ctx, body: cst.CSTNode, after: int = 0) -> bool:
    """`body` runs a step loop (after line `after`), itself or through a call of a function of
    this file that contains one."""
    for node in walk(ctx, body):
        if ctx.line(node) < after:
            continue
        if isinstance(node, LOOPS) and is_step_loop(ctx, node):
            return True
        if isinstance(node, cst.Call) and _trains(ctx, terminal_name(node.func)):
            return True
    return False


def _trains(ctx, name: str | None) -> bool:
    """A function of this file named `name` runs a step loop."""
    return name is not None and any(
        function.name.value == name
        and any(isinstance(n, LOOPS) and is_step_loop(ctx, n) for n in walk(ctx, function.body))
        for function in ctx.index.functions
    )
