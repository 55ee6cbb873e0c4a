from __future__ import annotations

import libcst as cst

from torchdoctor.lint.patterns import method_call, terminal_name, walk
from torchdoctor.lint.rule import Rule
from torchdoctor.lint.steps import guarded_in

_OPTIMIZER_PREFIX = "torch.optim."


class GradientsNeverCleared(Rule):
    """
    ## What it does
    Flags the `step()` calls of an optimizer built in this file (`torch.optim.*(...)`) when the
    file calls `backward()` but never clears that optimizer's gradients: no `zero_grad()` of
    this optimizer or of anything not known to be another optimizer (a module), no
    `p.grad = None`, no `p.grad.zero_()`, no call of a helper function named for it
    (`zero_grad(params)`, defined here or imported). With two optimizers (a GAN's generator and
    discriminator), `opt_g.zero_grad()` does not clear `opt_d`'s gradients. Also flags a
    `zero_grad()` that only runs under an `if` (a logging block, `if step % 50 == 0:`) in a
    loop that calls that optimizer's `step()` on every iteration (gradient accumulation steps
    under the same `if` and is left alone), and a function that steps every optimizer of a
    collection (`for opt in optimizers: opt.step()`) but clears only one of them by index
    (`optimizers[-1].zero_grad()`), and a `zero_grad()` that runs only once, before the loop
    that calls `backward()` and `step()` on every iteration (in a generator that the training
    loop sends its losses to, `opt.zero_grad()` above `while True: loss = yield; ...`), and
    `optimizer.zero_grad` written as a statement without its `()` (it clears nothing).

    ## Why is this bad
    `backward()` adds to `.grad`. Without clearing, each step applies the sum of every
    gradient since the start: the effective step size grows with the step count and training
    diverges or stalls. This is a correctness error.

    ## Example
    ```python
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        criterion(model(x), y).backward()
        optimizer.step()
    ```

    ## Use instead
    ```python
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    ```

    ## Fix safety
    No automatic fix: where the call belongs depends on the loop (gradient accumulation clears
    after every `step()`, not after every `backward()`).
    """

    code = "TD125"
    name = "gradients-never-cleared"

    def check(self, ctx):
        yield from self._cleared_only_sometimes(ctx)
        yield from self._one_of_a_collection_cleared(ctx)
        yield from self._cleared_before_the_loop_only(ctx)
        referenced = list(self._referenced_not_called(ctx))
        yield from referenced
        calls = ctx.index.calls
        if not any(method_call(c, "backward") for c in calls) or _clears_by_hand(ctx):
            return
        optimizers = _optimizer_names(ctx)
        cleared = {terminal_name(c.func.value) for c in calls if method_call(c, "zero_grad")}
        if cleared - optimizers:  # a module's (or an unknown object's) zero_grad: may clear all
            return
        for call in calls:
            if not method_call(call, "step"):
                continue
            name = terminal_name(call.func.value)
            if referenced:
                break  # the missing `()` is the finding, reported above
            if name in optimizers and name not in cleared:
                why = (
                    f"`{name}.zero_grad()` is never called (other optimizers' are)"
                    if cleared
                    else "no `zero_grad()` in this file"
                )
                yield ctx.violation(
                    self,
                    call,
                    f"gradients are never cleared ({why}): every `step()` applies the sum of "
                    "all gradients so far",
                )

    def _cleared_only_sometimes(self, ctx):
        """In a loop that steps an optimizer of this file on every iteration, that optimizer's
        `zero_grad()` calls all sit under an `if` without an `else` that clears too (`if step %
        log_every == 0:`): the gradients of the other iterations add up."""
        optimizers = _optimizer_names(ctx)
        for loop in ctx.index.loops:
            own = [n for n in walk(ctx, loop.body, skip_loops=True) if isinstance(n, cst.Call)]
            stepped = {
                terminal_name(c.func.value)
                for c in own
                if method_call(c, "step") and not guarded_in(ctx, c, loop)
            }
            for name in sorted((stepped & optimizers) - {None}):
                clears = [
                    c
                    for c in own
                    if method_call(c, "zero_grad") and terminal_name(c.func.value) == name
                ]
                if not clears or any(_every_path(ctx, c, loop) for c in clears):
                    continue
                yield ctx.violation(
                    self,
                    clears[0],
                    f"`{name}.zero_grad()` runs only under an `if` while `{name}.step()` runs on "
                    "every iteration: the gradients of the other iterations add up",
                )

    def _referenced_not_called(self, ctx):
        """`optimizer.zero_grad` as a statement of its own, without the call's parentheses: it
        evaluates the bound method and clears nothing."""
        for node in walk(ctx, ctx.module, skip_functions=False):
            if (
                isinstance(node, cst.Expr)
                and isinstance(node.value, cst.Attribute)
                and node.value.attr.value == "zero_grad"
            ):
                yield ctx.violation(
                    self,
                    node.value,
                    f"`{ctx.code(node.value)}` is referenced, not called (no `()`): it clears "
                    "no gradient, and every `step()` applies the sum of all gradients so far",
                )

    def _cleared_before_the_loop_only(self, ctx):
        """Every `zero_grad()` of an optimizer sits before the loop that calls `backward()` and
        that optimizer's `step()` on every iteration, in the same function and in no loop
        (`opt.zero_grad()` once, then `while True: loss = yield; loss.backward(); opt.step()`):
        the gradients are cleared once, then add up over all steps."""
        if _clears_by_hand(ctx):
            return
        optimizers = _optimizer_names(ctx)
        clears = [c for c in ctx.index.calls if method_call(c, "zero_grad")]
        if {terminal_name(c.func.value) for c in clears} - optimizers:
            return  # a module's (or an unknown object's) zero_grad may clear them all
        for loop in ctx.index.loops:
            own = [n for n in walk(ctx, loop.body, skip_loops=True) if isinstance(n, cst.Call)]
            if not any(method_call(c, "backward") for c in own):
                continue
            scope = ctx.enclosing(loop, cst.FunctionDef)
            stepped = {
                terminal_name(c.func.value)
                for c in own
                if method_call(c, "step") and not guarded_in(ctx, c, loop)
            }
            for name in sorted((stepped & optimizers) - {None}):
                mine = [c for c in clears if terminal_name(c.func.value) == name]
                if mine and all(
                    ctx.enclosing(c, cst.FunctionDef) is scope
                    and ctx.enclosing(c, (cst.For, cst.While)) is None
                    and ctx.line(c) < ctx.line(loop)
                    for c in mine
                ):
                    yield ctx.violation(
                        self,
                        mine[-1],
                        f"`{name}.zero_grad()` runs once, before the loop that calls "
                        f"`backward()` and `{name}.step()` on every iteration: the gradients "
                        "of all steps add up",
                    )

    def _one_of_a_collection_cleared(self, ctx):
        """A function steps every optimizer of a collection (`for opt in optimizers:
        opt.step()`) but clears only one by index (`optimizers[-1].zero_grad()`), and nothing
        else in it clears gradients: the others' gradients add up."""
        if _clears_by_hand(ctx):
            return
        for loop in ctx.index.loops:
            if not (isinstance(loop, cst.For) and isinstance(loop.iter, cst.Name)):
                continue
            collection, item = loop.iter.value, terminal_name(loop.target)
            if not any(
                method_call(n, "step") and terminal_name(n.func.value) == item
                for n in walk(ctx, loop.body)
            ):
                continue
            scope = ctx.enclosing(loop, cst.FunctionDef) or ctx.module
            clears = [n for n in walk(ctx, scope) if method_call(n, "zero_grad")]
            by_index = [c for c in clears if _indexes(c.func.value, collection)]
            indexed = {ctx.code(c.func.value) for c in by_index}
            # one element by index (`optimizers[0]` and `optimizers[1]` may be all of them)
            if len(indexed) == 1 and len(by_index) == len(clears):
                yield ctx.violation(
                    self,
                    by_index[0],
                    f"only `{ctx.code(by_index[0].func.value)}` of `{collection}` is cleared while "
                    f"every optimizer in `{collection}` steps: the others' gradients add up",
                )


def _indexes(expr: cst.BaseExpression, collection: str) -> bool:
    """`expr` is `collection[...]`."""
    return (
        isinstance(expr, cst.Subscript)
        and isinstance(expr.value, cst.Name)
        and expr.value.value == collection
    )


def _every_path(ctx, clear: cst.Call, loop) -> bool:
    """`clear` runs on every iteration of `loop`: under no `if`, or under one whose other
    branch clears too."""
    for ancestor in ctx.ancestors(clear):
        if ancestor is loop:
            return True
        if isinstance(ancestor, cst.If):
            other = ancestor.orelse
            if other is None or not any(method_call(n, "zero_grad") for n in walk(ctx, other)):
                return False
    return True


def _optimizer_names(ctx) -> set[str]:
    """Names (or attribute names, `self.opt`) bound to a `torch.optim.*(...)` call."""
    names = {
        name
        for name, values in ctx.index.bindings.items()
        if any(_builds_optimizer(ctx, value) for value in values)
    }
    for target, value in ctx.index.attribute_assigns:
        if _builds_optimizer(ctx, value):
            names.add(target.attr.value)
    return names


def _builds_optimizer(ctx, value: cst.BaseExpression) -> bool:
    if not isinstance(value, cst.Call):
        return False
    name = ctx.call_name(value) or ""
    # the schedulers stepped beside an optimizer: torch.optim.lr_scheduler.*, swa_utils.SWALR
    return name.startswith(_OPTIMIZER_PREFIX) and not any(
        part in name for part in ("lr_scheduler", "swa_utils")
    )


def _clears_by_hand(ctx) -> bool:
    """`x.grad = None`, `x.grad.zero_()`, or a helper function `zero_grad(params)` (a plain call:
    mixed-precision trainers clear their parameter lists themselves) anywhere in the file."""
    for target, _ in ctx.index.attribute_assigns:
        if target.attr.value == "grad":
            return True
    for call in ctx.index.calls:
        if isinstance(call.func, cst.Name) and "zero_grad" in call.func.value:
            return True
        if method_call(call, "zero_", "detach_"):
            receiver = call.func.value
            if isinstance(receiver, cst.Attribute) and receiver.attr.value == "grad":
                return True
    return False
