"""Which code runs once per training step: the questions of the rules about per-step work.

A step loop is a loop that, at its own level (not in a loop nested in it), calls `backward()` or
`optimizer.step()`, or calls a function of this file that does so outside any loop of its own
(`train_step(batch)`, `self.training_step(x)`). A node runs per step when the nearest loop
around it is a step loop, or when it sits outside any loop in a function that a step loop calls
at its own level (`batch = self.next_batch()`). An epoch loop around a step loop is no step
loop, and neither is a function that runs a whole epoch.
"""

from __future__ import annotations

import re

import libcst as cst

from torchdoctor.lint.modules import built_class
from torchdoctor.lint.patterns import method_call, names_in, receiver, terminal_name, walk

LOOPS = (cst.For, cst.While)
_OPTIMIZER_RE = re.compile(r"opt|scaler", re.IGNORECASE)


def steps_here(ctx, body: cst.CSTNode) -> bool:
    """`body` calls `backward()` or `<optimizer>.step()` itself, outside nested loops."""
    for node in walk(ctx, body, skip_loops=True):
        if method_call(node, "backward"):
            return True
        if method_call(node, "step") and _OPTIMIZER_RE.search(terminal_name(receiver(node)) or ""):
            return True
    return False


def _step_functions(ctx) -> set[str]:
    """Names of this file's functions and methods that run one training step (their own
    `backward()`/`step()` outside any loop of theirs), cached per file."""
    names = ctx.memo.get("step_functions")
    if names is None:
        names = {f.name.value for f in ctx.index.functions if steps_here(ctx, f.body)}
        ctx.memo["step_functions"] = names
    assert isinstance(names, set)
    return names


def is_step_loop(ctx, loop: cst.For | cst.While) -> bool:
    if steps_here(ctx, loop.body):
        return True
    names = _step_functions(ctx)
    return any(
        isinstance(node, cst.Call) and terminal_name(node.func) in names
        for node in walk(ctx, loop.body, skip_loops=True)
    )


def step_loop_around(ctx, node: cst.CSTNode) -> cst.For | cst.While | None:
    """The step loop that runs `node` once per step (directly or through one call, under no
    `if`, of the function `node` sits in), or None."""
    loop = ctx.enclosing(node, LOOPS)
    function = ctx.enclosing(node, cst.FunctionDef)
    if loop is not None and (function is None or ctx.is_inside(loop, function)):
        return loop if is_step_loop(ctx, loop) else None
    if function is None:
        return None
    for call in ctx.index.calls:
        if terminal_name(call.func) != function.name.value or ctx.is_inside(call, function):
            continue
        caller_loop = ctx.enclosing(call, LOOPS)
        if (
            caller_loop is not None
            and is_step_loop(ctx, caller_loop)
            and not guarded_in(ctx, call, caller_loop)
        ):
            return caller_loop
    return None


def guarded_in(ctx, node: cst.CSTNode, loop: cst.CSTNode) -> bool:
    """An `if` stands between `node` and `loop` (or the function `node` is in): it runs on some
    steps only (`if step % 100 == 0:`, `if loss < best:`)."""
    for ancestor in ctx.ancestors(node):
        if ancestor is loop or isinstance(ancestor, cst.FunctionDef):
            return False
        if isinstance(ancestor, (cst.If, cst.IfExp)):
            return True
    return False


def is_epoch_loop(loop: cst.For | cst.While) -> bool:
    """`for epoch in ...`: one step per epoch (full-graph training), where a once-per-epoch
    action (a checkpoint, a snapshot) is the usual rhythm."""
    return isinstance(loop, cst.For) and any("epoch" in n.lower() for n in names_in(loop.target))


def every_step(ctx, node: cst.CSTNode) -> bool:
    """`node` runs on every training step: a step loop runs it, under no `if`, and that loop is
    no `for epoch in ...` loop (one step per epoch)."""
    loop = step_loop_around(ctx, node)
    return loop is not None and not is_epoch_loop(loop) and not guarded_in(ctx, node, loop)


def module_calls_every_step(ctx, forward: cst.FunctionDef) -> list[cst.Call]:
    """For the `forward` of a class of this file: the calls of an instance of that class
    (`model(x)` for `model = Net().to(device)`) that a step loop makes on every step, under no
    `if` (no `for epoch in ...` loop); empty for any other function."""
    owner = ctx.enclosing(forward, cst.ClassDef)
    if forward.name.value != "forward" or owner is None or ctx.enclosing(owner, cst.FunctionDef):
        return []
    calls = []
    for call in ctx.index.calls:
        if not isinstance(call.func, cst.Name) or built_class(ctx, call.func) != owner.name.value:
            continue
        loop = ctx.enclosing(call, LOOPS)
        if (
            loop is not None
            and is_step_loop(ctx, loop)
            and not is_epoch_loop(loop)
            and not guarded_in(ctx, call, loop)
        ):
            calls.append(call)
    return calls
