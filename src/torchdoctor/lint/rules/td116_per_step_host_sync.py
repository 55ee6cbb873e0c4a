"""TD116: host synchronisation on every training step."""

from __future__ import annotations

import re

import libcst as cst

from torchdoctor.lint.patterns import method_call, receiver, terminal_name, value_method, walk
from torchdoctor.lint.rule import Rule
from torchdoctor.lint.tensors import is_tensor

SYNC_METHODS = ("item", "cpu", "numpy", "tolist")
_OPTIMIZER_RE = re.compile(r"opt|scaler", re.IGNORECASE)


def is_training_loop(ctx, loop: cst.For | cst.While) -> bool:
    for node in walk(ctx, loop.body, skip_loops=True):
        if method_call(node, "backward"):
            return True
        if method_call(node, "step") and _OPTIMIZER_RE.search(terminal_name(receiver(node)) or ""):
            return True
    return False


def _unscaled(expr: cst.BaseExpression) -> cst.BaseExpression:
    """`loss` for `scaler.scale(loss)` (the AMP spelling of `loss.backward()`)."""
    if isinstance(expr, cst.Call) and method_call(expr, "scale") and expr.args:
        return expr.args[0].value
    return expr


class PerStepHostSync(Rule):
    """
    ## What it does
    Flags `.item()`, `.cpu()`, `.numpy()`, `.tolist()` and `print(loss)` that run on every
    iteration of a training loop (a loop that calls `backward()` or `optimizer.step()`), i.e.
    not under an `if` such as `if step % log_every == 0:`. Only values the code shows to be
    tensors count: the loss, a model's or a loss module's output (`nn.CrossEntropyLoss()(out, y)`
    included), results of `torch` functions and of arithmetic, comparisons and tensor methods
    on them, `param.grad`. `.cpu()` on a model, or on a value of unknown type, is not flagged,
    nor `value = loss.item()` when the loop tests `value` to stop (`if value < tol: break`,
    `while value > tol:`): the loop needs the number every step.

    ## Why is this bad
    Each of them copies a value to the host, which waits for every queued GPU kernel to finish:
    the CPU can no longer run ahead and queue the next step, so the GPU idles between steps.

    ## Example
    ```python
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    ```

    ## Use instead
    ```python
    for step, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        running += loss.detach()
        if step % 100 == 0:
            losses.append(running.item() / 100)
            running.zero_()
    ```

    ## Fix safety
    No automatic fix: accumulating on the device changes how and when values are logged.
    """

    code = "TD116"
    name = "per-step-host-sync"

    def check(self, ctx):
        for loop in ctx.index.loops:
            if not is_training_loop(ctx, loop):
                continue
            losses = {
                terminal_name(_unscaled(n.func.value))
                for n in walk(ctx, loop.body, skip_loops=True)
                if method_call(n, "backward")
            } - {None}
            syncs = [
                n
                for n in walk(ctx, loop.body, skip_loops=True)
                if self._is_sync(ctx, n, losses)
                and not self._guarded(ctx, n, loop)
                and not _decides_exit(ctx, n, loop)
            ]
            if syncs:
                # once the loop is shown to sync on a loss, its other `.item()` reads (other
                # losses, accuracies) sync on every step too
                flagged = {id(n) for n in syncs}
                syncs += [
                    n
                    for n in walk(ctx, loop.body, skip_loops=True)
                    if id(n) not in flagged
                    and value_method(ctx, n, "item")
                    and not self._guarded(ctx, n, loop)
                ]
                syncs.sort(key=ctx.line)
            receivers = {id(call) for n in syncs for call in _chain_below(n)}
            for call in syncs:
                if id(call) not in receivers:  # report `x.cpu().detach().numpy()` once
                    what = (
                        f".{call.func.attr.value}()"
                        if isinstance(call.func, cst.Attribute)
                        else "print(loss)"
                    )
                    yield ctx.violation(
                        self,
                        call,
                        f"`{what}` on every training step waits for the GPU; accumulate on "
                        "the device and read it every N steps",
                    )

    @staticmethod
    def _is_sync(ctx, node, losses: set[str]) -> bool:
        if value_method(ctx, node, *SYNC_METHODS):
            return is_tensor(ctx, node.func.value, losses)
        if isinstance(node, cst.Call) and ctx.call_name(node) == "builtins.print":
            # `print(loss)` formats the tensor on the host; `print(loss.item())` is reported above
            return any(
                isinstance(n, cst.Name)
                and n.value in losses
                and not isinstance(ctx.parent(n), cst.Attribute)
                for arg in node.args
                for n in [arg.value, *walk(ctx, arg.value)]
            )
        return False

    @staticmethod
    def _guarded(ctx, node, loop) -> bool:
        for ancestor in ctx.ancestors(node):
            if ancestor is loop:
                return False
            if isinstance(ancestor, cst.If):
                return True
        return False


def _chain_below(call: cst.Call) -> list[cst.Call]:
    """The method calls `call` is chained on: `.cpu()` and `.detach()` below the `.numpy()` of
    `x.cpu().detach().numpy()`, one sync read reported once."""
    below = []
    value = call.func.value if isinstance(call.func, cst.Attribute) else None
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        below.append(value)
        value = value.func.value
    return below


def _decides_exit(ctx, sync: cst.Call, loop) -> bool:
    """`value = loss.item()` whose value an `if` in the loop tests to leave it (`if value <
    tol: break`): the loop cannot go on without the number, so the sync is needed."""
    statement = ctx.parent(sync)
    if not isinstance(statement, cst.Assign) or len(statement.targets) != 1:
        return False
    target = statement.targets[0].target
    if not isinstance(target, cst.Name):
        return False

    def names_it(test: cst.BaseExpression) -> bool:
        return any(
            isinstance(n, cst.Name) and n.value == target.value for n in [test, *walk(ctx, test)]
        )

    if isinstance(loop, cst.While) and names_it(loop.test):  # `while value > tol:`
        return True
    return any(
        isinstance(node, cst.If)
        and names_it(node.test)
        and any(isinstance(n, (cst.Break, cst.Return)) for n in walk(ctx, node.body))
        for node in walk(ctx, loop.body, skip_loops=True)
    )
