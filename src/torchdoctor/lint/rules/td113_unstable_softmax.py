"""TD113: hand-written softmax without subtracting the maximum."""

from __future__ import annotations

import libcst as cst

from torchdoctor.lint.patterns import exp_operand, function_or_method, is_shifted
from torchdoctor.lint.rule import Rule


class UnstableSoftmax(Rule):
    """
    ## What it does
    Flags a hand-written softmax `exp(x) / sum(exp(x))` (with `torch.exp`/`.exp()` and
    `torch.sum`/`.sum()`, directly or through a variable) whose exponent is not shifted by
    subtracting a maximum.

    ## Why is this bad
    `exp` overflows float32 for inputs above about 88.7, giving `inf / inf = nan`; a softmax or
    cross-entropy built this way returns `nan` as soon as one logit is large.

    ## Example
    ```python
    def softmax(logits):
        exp = torch.exp(logits)
        return exp / torch.sum(exp)
    ```

    ## Use instead
    ```python
    def softmax(logits):
        return torch.softmax(logits, dim=-1)
    ```

    ## Fix safety
    No automatic fix: the sum's dimensions decide the softmax `dim`, which is not always
    visible.
    """

    code = "TD113"
    name = "unstable-softmax"
    level = "error"

    def check(self, ctx):
        for node in ctx.index.binary_ops:
            if not isinstance(node.operator, cst.Divide):
                continue
            numerator = exp_operand(ctx, node.left)
            summed = function_or_method(ctx, node.right, "torch.sum", "sum")
            denominator = exp_operand(ctx, summed) if summed is not None else None
            if numerator is None or denominator is None:
                continue
            if is_shifted(numerator) or is_shifted(denominator):
                continue
            yield ctx.violation(self, node, "softmax written as `exp(x) / sum(exp(x))` overflows for "
                                "large inputs; use `torch.softmax` (or subtract the max first)")
