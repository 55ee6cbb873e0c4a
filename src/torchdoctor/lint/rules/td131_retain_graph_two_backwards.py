"""TD131: two backward passes through one graph (`retain_graph=True`) where one would do."""

from __future__ import annotations

import libcst as cst

from torchdoctor.lint.patterns import argument, method_call, names_in, receiver, walk
from torchdoctor.lint.rule import Rule
from torchdoctor.lint.steps import LOOPS, steps_here

# calls between the two backward passes that read or change what the first one produced
_BETWEEN = {"step", "zero_grad", "clip_grad_norm_", "clip_grad_value_", "unscale_", "update"}


class RetainGraphTwoBackwards(Rule):
    """
    ## What it does
    Flags `a.backward(retain_graph=True)` followed, in the same block, by `b.backward()` of a
    loss `b` computed from values that exist before the first backward (no name it reads is
    assigned between the two: `loss_reg.backward()`, `mse(pred, y).backward()`), when nothing
    between the two steps an
    optimizer, clears or clips gradients, or reads a `.grad`: two losses of one forward pass
    (a multi-task model, an auxiliary loss), each with its own backward through the shared part.
    A GAN that steps the discriminator between its two backward passes is left alone. Also flags
    `loss.backward(retain_graph=True)` in a `for` loop over the losses, inside a training loop
    that steps once around it, when nothing in that loop steps, clears or reads gradients.

    ## Why is this bad
    The second backward walks the shared trunk again, and `retain_graph=True` keeps every saved
    activation alive until it runs. Gradients add up, so one backward of the summed losses gives
    the same gradients in one pass and frees the graph at once.

    ## Example
    ```python
    loss_cls = criterion(logits, y)
    loss_reg = mse(boxes, targets)
    loss_cls.backward(retain_graph=True)
    loss_reg.backward()
    optimizer.step()
    ```

    ## Use instead
    ```python
    (loss_cls + loss_reg).backward()
    optimizer.step()
    ```

    ## Fix safety
    No automatic fix: the sum gives the same gradients up to float rounding, but the author may
    weight the losses or want them logged apart.
    """

    code = "TD131"
    name = "retain-graph-two-backwards"

    def check(self, ctx):
        for node in ctx.index.calls:
            if not method_call(node, "backward") or not _retains(argument(node, "retain_graph", 1)):
                continue
            if _repeated_in_a_loop_of_one_step(ctx, node):
                yield ctx.violation(
                    self,
                    node,
                    "`backward(retain_graph=True)` in a loop over losses walks the shared graph "
                    "once per loss; one `backward()` of their sum gives the same gradients",
                )
                continue
            statement = ctx.statement_of(node)
            block = ctx.parent(statement)
            body = list(getattr(block, "body", None) or ())
            place = next((i for i, s in enumerate(body) if s is statement), None)
            if place is None:
                continue
            between = body[place + 1 :]
            later = _next_backward(ctx, between)
            if later is None or _recomputed_between(ctx, receiver(later), between, later):
                continue
            yield ctx.violation(
                self,
                node,
                "`backward(retain_graph=True)` then a second `backward()` through the same "
                "graph; one `backward()` of the summed losses gives the same gradients in one pass",
            )


def _retains(value) -> bool:
    """`retain_graph=True`, or a condition (`retain_graph=i < n - 1`: all but the last)."""
    if isinstance(value, cst.Name):
        return value.value == "True"
    return isinstance(value, cst.Comparison)


def _repeated_in_a_loop_of_one_step(ctx, backward: cst.Call) -> bool:
    """`for name, loss in losses.items(): loss.backward(retain_graph=True)`: the backward sits
    in a `for` loop, nested in a training loop that steps its optimizer once around it, and
    nothing in the inner loop steps, clears, clips or reads gradients."""
    inner = ctx.enclosing(backward, LOOPS)
    if not isinstance(inner, cst.For):
        return False
    outer = ctx.enclosing(inner, LOOPS)
    if outer is None or not steps_here(ctx, outer.body):
        return False
    for node in walk(ctx, inner.body):
        if isinstance(node, cst.Attribute) and node.attr.value == "grad":
            return False
        if isinstance(node, cst.Call) and node is not backward:
            name = node.func.attr.value if isinstance(node.func, cst.Attribute) else None
            if name in _BETWEEN or name == "backward" or "grad" in (ctx.call_name(node) or ""):
                return False
    return True


def _next_backward(ctx, statements: list) -> cst.Call | None:
    """The next `x.backward()` in `statements` (a plain statement of the block), when nothing
    before it steps, clears, clips or reads gradients."""
    for statement in statements:
        for node in [statement, *walk(ctx, statement)]:
            if isinstance(node, cst.Attribute) and node.attr.value == "grad":
                return None
            if not isinstance(node, cst.Call):
                continue
            name = node.func.attr.value if isinstance(node.func, cst.Attribute) else None
            if name == "backward" and statement is ctx.statement_of(node):
                return node
            if name in _BETWEEN or (ctx.call_name(node) or "").endswith(tuple(_BETWEEN)):
                return None
        if isinstance(statement, (cst.If, cst.For, cst.While, cst.With, cst.Try)):
            return None  # the second backward's condition or repetition is not this one's
    return None


def _recomputed_between(ctx, loss: cst.BaseExpression, statements: list, later) -> bool:
    """A name the second loss reads is assigned between the two backward passes: it comes from
    another forward, not from the graph the first one retained."""
    read = {n.value for n in [loss, *walk(ctx, loss)] if isinstance(n, cst.Name)}
    for statement in statements:
        if statement is ctx.statement_of(later):
            return False
        for node in [statement, *walk(ctx, statement)]:
            targets = []
            if isinstance(node, cst.Assign):
                targets = [t.target for t in node.targets]
            elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
                targets = [node.target]
            if any(names_in(t) & read for t in targets):
                return True
    return False
