"""Building blocks for fixes: small libcst node rewrites that keep the surrounding layout."""

from __future__ import annotations

import libcst as cst


def add_keyword(call: cst.Call, name: str, value: str) -> cst.Call:
    """`f(a, b)` -> `f(a, b, name=value)`, keeping one-per-line layouts one per line."""
    new_arg = cst.Arg(
        keyword=cst.Name(name),
        value=cst.parse_expression(value),
        equal=cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
        ),
    )
    args = list(call.args)
    if not args:
        return call.with_changes(args=[new_arg])
    last = args[-1]
    if isinstance(last.comma, cst.Comma):  # trailing comma: the call is laid out one per line
        separator = (
            args[-2].comma if len(args) > 1 and isinstance(args[-2].comma, cst.Comma) else None
        )
        if separator is None:
            separator = cst.Comma(whitespace_after=_line_break_or_space(call))
        args[-1] = last.with_changes(comma=separator)
        args.append(new_arg.with_changes(comma=last.comma))
    elif isinstance(last.whitespace_after_arg, cst.ParenthesizedWhitespace):  # `)` on its own line
        args[-1] = last.with_changes(
            comma=cst.Comma(whitespace_after=_line_break_or_space(call)),
            whitespace_after_arg=cst.SimpleWhitespace(""),
        )
        args.append(new_arg.with_changes(whitespace_after_arg=last.whitespace_after_arg))
    else:
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        args.append(new_arg)
    return call.with_changes(args=args)


def _line_break_or_space(call: cst.Call):
    """The whitespace after `(` when the arguments start on their own line, else one space."""
    if isinstance(call.whitespace_before_args, cst.ParenthesizedWhitespace):
        return call.whitespace_before_args
    return cst.SimpleWhitespace(" ")


def remove_argument(call: cst.Call, arg: cst.Arg) -> cst.Call:
    args = [a for a in call.args if a is not arg]
    if args and not isinstance(arg.comma, cst.Comma):
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return call.with_changes(args=args)


def rename_attribute(expr: cst.BaseExpression, new_attr: str) -> cst.BaseExpression:
    """`torch.softmax` -> `torch.log_softmax` (only the last part changes)."""
    if isinstance(expr, cst.Attribute):
        return expr.with_changes(attr=cst.Name(new_attr))
    return cst.Name(new_attr)
