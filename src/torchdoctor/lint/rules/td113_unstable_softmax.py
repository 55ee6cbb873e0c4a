"""TD113: hand-written softmax without subtracting the maximum."""

from __future__ import annotations

import re

import libcst as cst

from torchdoctor.lint.patterns import exp_operand, function_or_method, is_shifted, terminal_name
from torchdoctor.lint.rule import Rule

# log-probabilities are <= 0, so their exp cannot overflow (`logits` are not: no match)
_LOG_PROB_RE = re.compile(
    r"^log_?(p|ps|prob|probs|probas?|probabilit(y|ies)|likelihoods?)$", re.IGNORECASE
)
_LOG_PROB_FUNCTIONS = ("log_softmax", "logsigmoid")


def _negated(expr: cst.BaseExpression) -> bool:
    """`-d2`, `-d2 / (2 * sigma ** 2)`, `x * -beta`: a negative factor (Gaussian kernels)."""
    if isinstance(expr, cst.UnaryOperation):
        return isinstance(expr.operator, cst.Minus)
    if isinstance(expr, cst.BinaryOperation) and isinstance(
        expr.operator, (cst.Multiply, cst.Divide)
    ):
        return _negated(expr.left) or _negated(expr.right)
    return False


def _is_log_probability(ctx, expr: cst.BaseExpression) -> bool:
    name = terminal_name(expr)
    if name and _LOG_PROB_RE.match(name):
        return True
    return isinstance(expr, cst.Call) and (terminal_name(expr.func) or "") in _LOG_PROB_FUNCTIONS


def _cannot_overflow(ctx, exponent: cst.BaseExpression) -> bool:
    """The exponent is shifted by a maximum (here, or in any assignment of the variable),
    negated, or a log-probability."""
    candidates = [exponent]
    if isinstance(exponent, cst.Name):
        scope = ctx.scope(exponent)
        for assignment in scope[exponent.value] if scope is not None else ():
            value = ctx.index.assigned.get(id(getattr(assignment, "node", None)))
            if value is not None:
                candidates.append(value)
    return any(is_shifted(c) or _negated(c) or _is_log_probability(ctx, c) for c in candidates)


class UnstableSoftmax(Rule):
    """
    ## What it does
    Flags a hand-written softmax `exp(x) / sum(exp(x))` (with `torch.exp`/`.exp()` and
    `torch.sum`/`.sum()`, directly or through a variable) whose exponent is not shifted by
    subtracting a maximum. An exponent that cannot be large is left alone: shifted in an
    earlier assignment (`s = s - s.amax(-1, keepdim=True)`), negated (`exp(-d2 / 2)`), or a
    log-probability (`logp`, `log_softmax(...)`).

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

    def check(self, ctx):
        for node in ctx.index.binary_ops:
            if not isinstance(node.operator, cst.Divide):
                continue
            numerator = exp_operand(ctx, node.left)
            summed = function_or_method(ctx, node.right, "torch.sum", "sum")
            denominator = exp_operand(ctx, summed) if summed is not None else None
            if numerator is None or denominator is None:
                continue
            if _cannot_overflow(ctx, numerator) or _cannot_overflow(ctx, denominator):
                continue
            yield ctx.violation(
                self,
                node,
                "softmax written as `exp(x) / sum(exp(x))` overflows for "
                "large inputs; use `torch.softmax` (or subtract the max first)",
            )
