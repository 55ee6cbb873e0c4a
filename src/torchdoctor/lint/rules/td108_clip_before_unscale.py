"""TD108: gradient clipping on scaled gradients."""

from __future__ import annotations

import libcst as cst

from torchdoctor.lint.patterns import exclusive_branches, method_call, walk
from torchdoctor.lint.rule import Rule

CLIP_FUNCTIONS = ("torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad_value_")


class ClipBeforeUnscale(Rule):
    """
    ## What it does
    Flags `clip_grad_norm_` / `clip_grad_value_` after `scaler.scale(loss).backward()` with no
    `scaler.unscale_(optimizer)` in between.

    ## Why is this bad
    After `scaler.scale(loss).backward()` the gradients are multiplied by the loss scale
    (65536 at first). Clipping them then compares the *scaled* norm with `max_norm`, so
    gradients are clipped far too hard (or, for `clip_grad_value_`, by a threshold that changes
    whenever the scale does). This is a correctness bug, not a style issue.

    ## Example
    ```python
    scaler.scale(loss).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    ```

    ## Use instead
    ```python
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    ```

    ## Fix safety
    Unsafe: the fix inserts `scaler.unscale_(<optimizer passed to scaler.step>)`, which changes
    the training dynamics (that is the point), and `unscale_` may be called only once per
    optimizer per step. Without a visible `scaler.step(optimizer)` there is no fix.
    """

    code = "TD108"
    name = "clip-before-unscale"
    fix_safety = "unsafe"
    level = "error"

    def check(self, ctx):
        for clip in ctx.calls_to(*CLIP_FUNCTIONS):
            container = ctx.enclosing(clip, cst.FunctionDef) or ctx.module
            clip_line = ctx.line(clip)
            scaler, backward_line = self._scaled_backward_before(ctx, container, clip)
            if scaler is None or self._unscaled_between(
                ctx, container, scaler, backward_line, clip_line
            ):
                continue
            yield ctx.violation(
                self,
                clip,
                f"gradients are clipped while still scaled by "
                f"`{scaler}`; call `{scaler}.unscale_(optimizer)` first",
                self._fix(ctx, container, clip, scaler),
            )

    @staticmethod
    def _nodes(ctx, container):
        return walk(ctx, container if isinstance(container, cst.Module) else container.body)

    def _scaled_backward_before(self, ctx, container, clip) -> tuple[str | None, int]:
        """The scaler expression and line of the last `S.scale(loss).backward()` before `clip`
        on a path that reaches it (not in the other branch of an `if`: the branch without the
        scaler clips unscaled gradients, rightly)."""
        found, found_line = None, 0
        line = ctx.line(clip)
        for node in self._nodes(ctx, container):
            if method_call(node, "backward") and method_call(node.func.value, "scale"):
                if ctx.line(node) < line and not exclusive_branches(ctx, node, clip):
                    found, found_line = ctx.code(node.func.value.func.value), ctx.line(node)
        return found, found_line

    def _unscaled_between(self, ctx, container, scaler: str, start: int, end: int) -> bool:
        for node in self._nodes(ctx, container):
            if method_call(node, "unscale_") and ctx.code(node.func.value) == scaler:
                if start < ctx.line(node) <= end:
                    return True
        return False

    def _fix(self, ctx, container, clip, scaler: str):
        clip_line = ctx.line(clip)
        steps = [
            n
            for n in self._nodes(ctx, container)
            if method_call(n, "step")
            and ctx.code(n.func.value) == scaler
            and n.args
            and ctx.line(n) > clip_line
        ]
        statement = ctx.statement_of(clip)
        if not steps or not isinstance(statement, cst.SimpleStatementLine):
            return None
        optimizer = ctx.code(steps[0].args[0].value)
        unscale = cst.parse_statement(f"{scaler}.unscale_({optimizer})\n")
        return ctx.make_fix(
            self.fix_safety,
            f"Insert `{scaler}.unscale_({optimizer})`",
            {statement: cst.FlattenSentinel([unscale, statement])},
        )
