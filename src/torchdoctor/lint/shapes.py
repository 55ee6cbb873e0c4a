"""Tensor shapes that the code states outright (literal data or literal sizes), nothing more."""

from __future__ import annotations

import libcst as cst

from torchdoctor.lint.patterns import argument, int_value

_SIZED_FACTORIES = {f"torch.{n}" for n in "zeros ones empty rand randn full".split()}


def _literal_shape(node: cst.BaseExpression) -> tuple[int, ...] | None:
    if isinstance(node, (cst.Integer, cst.Float)):
        return ()
    if isinstance(node, cst.UnaryOperation):
        return _literal_shape(node.expression)
    if isinstance(node, (cst.List, cst.Tuple)) and node.elements:
        inner = {_literal_shape(e.value) for e in node.elements}
        shape = inner.pop() if len(inner) == 1 else None
        if shape is not None:
            return (len(node.elements), *shape)
    return None


def _size_arguments(call: cst.Call) -> tuple[int, ...] | None:
    args = [a for a in call.args if a.keyword is None]
    if call.args and not args:
        size = argument(call, "size", 0)
        args = [cst.Arg(size)] if size is not None else []
    if len(args) == 1 and isinstance(args[0].value, (cst.List, cst.Tuple)):
        values = [int_value(e.value) for e in args[0].value.elements]
    else:
        values = [int_value(a.value) for a in args]
    sizes = [v for v in values if v is not None]
    return tuple(sizes) if sizes and len(sizes) == len(values) else None


def known_shape(ctx, expr: cst.BaseExpression | None, depth: int = 0) -> tuple[int, ...] | None:
    if expr is None or depth > 3:
        return None
    if isinstance(expr, cst.Name):
        return known_shape(ctx, ctx.single_value(expr), depth + 1)
    if not isinstance(expr, cst.Call):
        return None
    name = ctx.call_name(expr)
    if name == "torch.tensor" and expr.args:
        return _literal_shape(expr.args[0].value)
    if name in _SIZED_FACTORIES:
        if name == "torch.full":  # full(size, fill_value)
            size = argument(expr, "size", 0)
            return (
                _size_arguments(cst.Call(func=expr.func, args=[cst.Arg(size)]))
                if size is not None
                else None
            )
        return _size_arguments(expr)
    return None


def broadcast_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    rank = max(len(a), len(b))
    a, b = (1,) * (rank - len(a)) + a, (1,) * (rank - len(b)) + b
    if any(x != y and 1 not in (x, y) for x, y in zip(a, b)):
        return None  # would not broadcast at all
    return tuple(max(x, y) for x, y in zip(a, b))


def broadcast_expands(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    """Broadcasting `a` with `b` tiles *both* (an outer-product-like result larger than either
    operand, the classic `[2, 1] + [2]` surprise); adding a bias `[3]` to `[5, 3]` does not count."""
    if not a or not b:
        return False
    result = broadcast_shape(a, b)
    return result is not None and result != a and result != b
