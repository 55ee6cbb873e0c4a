"""TD119: reducing a broadcast result without naming the dimension."""

from __future__ import annotations

import libcst as cst

from torchdoctor.lint.patterns import receiver, value_method
from torchdoctor.lint.rule import Rule
from torchdoctor.lint.shapes import broadcast_expands, known_shape

REDUCTIONS = ("sum", "mean", "max", "min", "prod", "amax", "amin", "std", "var", "squeeze")
_ELEMENTWISE = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.Power)


class ReductionOverBroadcast(Rule):
    """
    ## What it does
    Flags `sum`/`mean`/`max`/`min`/`prod`/`std`/`var`/`squeeze` without a `dim` applied to an
    elementwise operation whose operands have shapes (stated in the code) that broadcast to a
    shape larger than either of them because one operand lacks a dimension, e.g. a `[2, 1]`
    tensor plus a `[2]` tensor. Not flagged: a `[5, 3]` tensor plus a `[3]` bias (the result
    has the first operand's shape), and operands of equal rank such as `[5, 1] * [1, 3]` (a
    deliberate outer product).

    ## Why is this bad
    Broadcasting silently tiles the smaller operand: `torch.sum(a + b)` with shapes `[2, 1]`
    and `[2]` adds up a `[2, 2]` result, not two elements, and the wrong number looks
    plausible. Naming the dimension makes a shape mistake fail loudly.

    ## Example
    ```python
    a = torch.tensor([[1.0], [2.0]])
    b = torch.tensor([1.0, 2.0])
    c = torch.sum(a + b)
    ```

    ## Use instead
    ```python
    a = torch.tensor([[1.0], [2.0]])
    b = torch.tensor([1.0, 2.0])
    c = torch.sum(a + b, dim=0)
    ```

    ## Fix safety
    No automatic fix: only the author knows which dimension was meant.
    """

    code = "TD119"
    name = "reduction-over-broadcast"
    level = "error"

    def check(self, ctx):
        for call in ctx.index.calls:
            operand = self._undimensioned_operand(ctx, call)
            if operand is None:
                continue
            if isinstance(operand, cst.Name):
                operand = ctx.single_value(operand)
            if not isinstance(operand, cst.BinaryOperation) or not isinstance(
                operand.operator, _ELEMENTWISE
            ):
                continue
            left, right = known_shape(ctx, operand.left), known_shape(ctx, operand.right)
            # operands of the same rank with complementary singleton dimensions ([n, 1] * [1, m])
            # are a deliberate outer product; the accident is an operand missing a dimension
            if (
                left is not None
                and right is not None
                and len(left) != len(right)
                and broadcast_expands(left, right)
            ):
                yield ctx.violation(
                    self,
                    call,
                    f"reduction without `dim` over a broadcast of shapes "
                    f"{list(left)} and {list(right)}; name the dimension",
                )

    @staticmethod
    def _undimensioned_operand(ctx, call: cst.Call):
        name = ctx.call_name(call) or ""
        if name.startswith("torch.") and name[6:] in REDUCTIONS:
            return call.args[0].value if len(call.args) == 1 and not call.args[0].keyword else None
        if value_method(ctx, call, *REDUCTIONS) and not call.args:
            return receiver(call)
        return None
