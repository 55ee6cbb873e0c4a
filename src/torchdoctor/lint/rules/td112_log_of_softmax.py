"""TD112: `log(softmax(x))` instead of `log_softmax(x)`."""

from __future__ import annotations

import libcst as cst

from torchdoctor.lint.edits import rename_attribute
from torchdoctor.lint.patterns import receiver, value_method
from torchdoctor.lint.rule import Rule

SOFTMAX_FUNCTIONS = {"torch.softmax", "torch.nn.functional.softmax", "torch.special.softmax"}


class LogOfSoftmax(Rule):
    """
    ## What it does
    Flags `torch.log(torch.softmax(x, dim))`, `torch.log(F.softmax(x, dim))`,
    `x.softmax(dim).log()` and the like.

    ## Why is this bad
    Softmax underflows to exactly 0 for logits far below the maximum, and `log(0)` is `-inf`,
    which turns the loss and the gradients into `nan`/`inf`. `log_softmax` computes
    `x - logsumexp(x)` directly, which is exact where the two-step version breaks, and faster.

    ## Example
    ```python
    log_probs = torch.log(F.softmax(logits, dim=1))
    ```

    ## Use instead
    ```python
    log_probs = F.log_softmax(logits, dim=1)
    ```

    ## Fix safety
    Safe: the fix keeps the same operand, `dim` and `dtype` arguments; results only differ
    where the original lost precision.
    """

    code = "TD112"
    name = "log-of-softmax"
    fix_safety = "safe"
    level = "error"

    def check(self, ctx):
        for call in ctx.index.calls:
            inner = self._softmax_under_log(ctx, call)
            if inner is None:
                continue
            fix = None
            if isinstance(inner.func, cst.Attribute):
                fix = ctx.make_fix(
                    self.fix_safety,
                    "Use `log_softmax`",
                    {call: inner.with_changes(func=rename_attribute(inner.func, "log_softmax"))},
                )
            yield ctx.violation(
                self, call, "`log(softmax(x))` underflows to `-inf`; use `log_softmax(x)`", fix
            )

    @staticmethod
    def _softmax_under_log(ctx, call: cst.Call) -> cst.Call | None:
        if ctx.call_name(call) == "torch.log":
            if len(call.args) != 1 or call.args[0].keyword:
                return None
            operand = call.args[0].value
        elif value_method(ctx, call, "log") and not call.args:
            operand = receiver(call)
        else:
            return None
        if isinstance(operand, cst.Call) and (
            ctx.call_name(operand) in SOFTMAX_FUNCTIONS or value_method(ctx, operand, "softmax")
        ):
            return operand
        return None
