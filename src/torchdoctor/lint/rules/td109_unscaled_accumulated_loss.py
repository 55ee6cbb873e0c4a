"""TD109: gradient accumulation without dividing the loss."""

from __future__ import annotations

import re

import libcst as cst

from torchdoctor.lint.patterns import int_value, method_call, receiver, terminal_name, walk
from torchdoctor.lint.rule import Rule

_OPTIMIZER_RE = re.compile(r"opt|scaler", re.IGNORECASE)


def _modulo_divisor(ctx, test: cst.BaseExpression) -> cst.BaseExpression | None:
    """`k` in a test like `(i + 1) % k == 0` (possibly inside `... or last`)."""
    for node in [test, *walk(ctx, test)]:
        if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
            target = node.comparisons[0]
            if (
                isinstance(target.operator, cst.Equal)
                and int_value(target.comparator) == 0
                and isinstance(node.left, cst.BinaryOperation)
                and isinstance(node.left.operator, cst.Modulo)
            ):
                return node.left.right
    return None


def _steps_optimizer(ctx, body: cst.CSTNode) -> bool:
    return any(
        method_call(n, "step") and _OPTIMIZER_RE.search(terminal_name(receiver(n)) or "")
        for n in walk(ctx, body)
    )


def _stepped_right_after(ctx, backward: cst.Call) -> bool:
    """A later plain statement of the block holding `backward` steps an optimizer
    unconditionally: these gradients are applied every iteration, not accumulated."""
    statement = ctx.statement_of(backward)
    block = ctx.parent(statement)
    body = getattr(block, "body", None)
    if not isinstance(body, (list, tuple)) or statement not in body:
        return False
    later = body[body.index(statement) + 1 :]
    return any(_steps_here(s) for s in later)


def _steps_here(statement: cst.CSTNode) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        call = small.value if isinstance(small, cst.Expr) else None
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute):
            if call.func.attr.value == "step" and _OPTIMIZER_RE.search(
                terminal_name(call.func.value) or ""
            ):
                return True
    return False


def _cleared_just_before(ctx, loop, backward: cst.Call, guards: list[cst.If]) -> bool:
    """`zero_grad()` runs under the step's own condition before the backward (`if (j + 1) %
    k == 0: zero_grad()`; backward; `if (j + 1) % k == 0: step()`): the gradients of the
    iterations between steps are wiped before the one the step uses."""
    tests = {ctx.code(g.test) for g in guards}
    line = ctx.line(backward)
    for node in walk(ctx, loop.body, skip_loops=True):
        if (
            isinstance(node, cst.If)
            and ctx.code(node.test) in tests
            and ctx.line(node) < line
            and not ctx.is_inside(backward, node)
            and any(method_call(n, "zero_grad") for n in walk(ctx, node.body))
            and not _steps_optimizer(ctx, node.body)  # a step there uses what accumulated
        ):
            return True
    return False


def _has_division(ctx, node: cst.CSTNode) -> bool:
    return any(
        isinstance(n, cst.BinaryOperation) and isinstance(n.operator, (cst.Divide, cst.FloorDivide))
        for n in [node, *walk(ctx, node)]
    )


class UnscaledAccumulatedLoss(Rule):
    """
    ## What it does
    Flags `loss.backward()` in a loop that steps the optimizer only every `k` iterations
    (`if (i + 1) % k == 0: optimizer.step()`) when the loss is never divided. Left alone: a
    `zero_grad()` under the step's own condition before the backward, where nothing accumulates.

    ## Why is this bad
    Gradients add up over the `k` backward passes, so the update is `k` times larger than one
    batch's mean gradient: the effective learning rate silently grows with the accumulation
    count, and results no longer match training with a `k` times larger batch.

    ## Example
    ```python
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        loss.backward()
        if (i + 1) % accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
    ```

    ## Use instead
    ```python
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y) / accumulation_steps
        loss.backward()
        if (i + 1) % accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
    ```

    ## Fix safety
    No automatic fix: dividing changes the gradient scale, and some authors compensate in the
    learning rate instead.
    """

    code = "TD109"
    name = "unscaled-accumulated-loss"
    level = "error"

    def check(self, ctx):
        for loop in ctx.index.loops:
            guards = [
                n
                for n in walk(ctx, loop.body, skip_loops=True)
                if isinstance(n, cst.If)
                and _modulo_divisor(ctx, n.test) is not None
                and _steps_optimizer(ctx, n.body)
            ]
            guards = [g for g in guards if int_value(_modulo_divisor(ctx, g.test)) != 1]
            if not guards:
                continue
            divisor = ctx.code(_modulo_divisor(ctx, guards[0].test))
            for node in walk(ctx, loop.body, skip_loops=True):
                if not method_call(node, "backward") or any(ctx.is_inside(node, g) for g in guards):
                    continue
                if _stepped_right_after(ctx, node):
                    continue  # its own optimizer steps every iteration (another one is delayed)
                if _cleared_just_before(ctx, loop, node, guards):
                    continue  # the step sees one backward's gradient: nothing accumulates
                loss = node.func.value
                if method_call(loss, "scale") and loss.args:
                    loss = loss.args[0].value
                if self._undivided(ctx, loop, loss, divisor):
                    yield ctx.violation(
                        self,
                        node,
                        f"the optimizer steps every `{divisor}` iterations but "
                        f"the loss is not divided by `{divisor}`; gradients are "
                        f"`{divisor}` times too large",
                    )

    @staticmethod
    def _undivided(ctx, loop, loss: cst.BaseExpression, divisor: str) -> bool:
        if not isinstance(loss, cst.Name):
            return not _has_division(ctx, loss) and isinstance(loss, cst.Call)
        assigned = False
        for node in walk(ctx, loop.body):
            if isinstance(node, cst.AugAssign) and terminal_name(node.target) == loss.value:
                if isinstance(node.operator, (cst.DivideAssign, cst.FloorDivideAssign)):
                    return False
            elif isinstance(node, cst.Assign) and any(
                isinstance(t.target, cst.Name) and t.target.value == loss.value
                for t in node.targets
            ):
                assigned = True
                if _has_division(ctx, node.value) or divisor in ctx.code(node.value):
                    return False
        return assigned
