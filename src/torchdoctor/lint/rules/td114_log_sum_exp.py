"""TD114: `log(sum(exp(x)))` instead of `logsumexp`."""

from __future__ import annotations

import libcst as cst

from torchdoctor.lint.patterns import argument, exp_operand, function_or_method, is_shifted
from torchdoctor.lint.rule import Rule


class LogSumExp(Rule):
    """
    ## What it does
    Flags `torch.log(torch.sum(torch.exp(x), dim))` and its method forms
    (`x.exp().sum(dim).log()`) when the exponent is not shifted by a maximum.

    ## Why is this bad
    `exp(x)` overflows to `inf` for inputs above about 88.7 in float32 (11 in float16) and
    underflows to 0 for very negative ones, so the result becomes `inf` or `-inf`.
    `torch.logsumexp` subtracts the maximum internally and is exact over the whole range.

    ## Example
    ```python
    lse = torch.log(torch.sum(torch.exp(scores), dim=1))
    ```

    ## Use instead
    ```python
    lse = torch.logsumexp(scores, dim=1)
    ```

    ## Fix safety
    Safe when the sum names its dimensions (the fix keeps `dim` and `keepdim`) and the file
    imports `torch`; a sum over all elements gets no fix because `logsumexp` requires `dim`.
    """

    code = "TD114"
    name = "log-sum-exp"
    fix_safety = "safe"
    level = "error"

    def check(self, ctx):
        for call in ctx.index.calls:
            summed = function_or_method(ctx, call, "torch.log", "log")
            if summed is None or (call.args and ctx.call_name(call) != "torch.log"):
                continue
            operand = function_or_method(ctx, summed, "torch.sum", "sum")
            inner = exp_operand(ctx, operand, depth=1) if operand is not None else None
            if inner is None or is_shifted(inner):
                continue
            yield ctx.violation(
                self,
                call,
                "`log(sum(exp(x)))` overflows; use `torch.logsumexp(x, dim)`",
                self._fix(ctx, call, summed, inner),
            )

    def _fix(self, ctx, call, summed: cst.Call, inner: cst.BaseExpression):
        if not ctx.index.torch_aliases or any(a.star for a in summed.args):
            return None
        is_function = ctx.call_name(summed) == "torch.sum"
        rest = list(summed.args[1:] if is_function else summed.args)
        dim = argument(summed, "dim", 1 if is_function else 0)
        if dim is None or any(
            a.keyword and a.keyword.value not in ("dim", "keepdim") for a in rest
        ):
            return None
        args = (
            [cst.Arg(inner, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))]
            if rest
            else [cst.Arg(inner)]
        )
        new = cst.Call(
            func=cst.parse_expression(f"{ctx.index.torch_aliases[0]}.logsumexp"),
            args=[*args, *rest],
        )
        return ctx.make_fix(self.fix_safety, "Use `torch.logsumexp`", {call: new})
