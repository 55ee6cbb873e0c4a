"""Settings a program switches behaviour on: the defaults the file gives a named setting
(`cfg.debug`, `args.dtype`, `CONFIG["debug"]`), and code guarded by an explicit opt-in switch.

A rule that flags `set_detect_anomaly(cfg.debug)` only when `debug` defaults to on reads the
defaults here; "don't know" (no default in the file) is answered with an empty list.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

import libcst as cst

from torchdoctor.lint.context import FileContext
from torchdoctor.lint.patterns import argument, keyword, string_value


def setting_name(expr: cst.BaseExpression) -> str | None:
    """`debug` for `debug`, `cfg.debug`, `cfg["debug"]`, `cfg["train"]["debug"]`."""
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1:
        index = expr.slice[0].slice
        if isinstance(index, cst.Index):
            return string_value(index.value)
    return None


def _nodes(ctx: FileContext) -> Iterator[cst.CSTNode]:
    for children in ctx.index.children.values():
        yield from children


def defaults(ctx: FileContext, name: str, depth: int = 0) -> list[cst.BaseExpression]:
    """The values the file binds to setting `name`: `name = v`, `name: T = v` (dataclass fields
    too), `self.name = v`, `{"name": v}`, `f(name=v)`, `x.get("name", v)`,
    `add_argument("--name", default=v)` (`action="store_true"`: False, `"store_false"`: True);
    not those under an `if` the file's own defaults decide against."""
    return [v for v in _bindings(ctx, name) if not guarded_off(ctx, v, depth + 1)]


def _bindings(ctx: FileContext, name: str) -> list[cst.BaseExpression]:
    if "setting_bindings" not in ctx.memo:  # one pass, however many settings are asked about
        ctx.memo["setting_bindings"] = _binding_tables(ctx)
    tables = cast(list[dict[str, list[cst.BaseExpression]]], ctx.memo["setting_bindings"])
    found: list[cst.BaseExpression] = list(ctx.index.bindings.get(name, []))
    for table in tables:
        found += table.get(name, [])
    return found


def _binding_tables(ctx: FileContext) -> list[dict[str, list[cst.BaseExpression]]]:
    """Setting name -> bound values, one table per kind of binding, in the order `_bindings`
    lists them: `self.name = v`; `{"name": v}` and tuple assignments; keywords and
    `.get("name", v)` / `add_argument("--name", default=v)`."""
    attributes: dict[str, list[cst.BaseExpression]] = {}
    for attribute, value in ctx.index.attribute_assigns:
        attributes.setdefault(attribute.attr.value, []).append(value)
    literals: dict[str, list[cst.BaseExpression]] = {}
    for node in _nodes(ctx):
        if isinstance(node, cst.DictElement):
            key = string_value(node.key)
            if key is not None:
                literals.setdefault(_normal(key), []).append(node.value)
        elif isinstance(node, cst.Assign) and isinstance(node.value, cst.Tuple):
            for target in node.targets:  # `args.a, args.b = "32", 200`
                if isinstance(target.target, cst.Tuple):
                    for t, v in zip(target.target.elements, node.value.elements):
                        if (setting := setting_name(t.value)) is not None:
                            literals.setdefault(setting, []).append(v.value)
    calls: dict[str, list[cst.BaseExpression]] = {}
    for call in ctx.index.calls:
        for arg in call.args:
            if arg.keyword is not None:
                calls.setdefault(arg.keyword.value, []).append(arg.value)
        if not isinstance(call.func, cst.Attribute):
            continue
        method = call.func.attr.value
        if method == "get":
            key = string_value(argument(call, "", 0))
            default = argument(call, "default", 1)
            if key is not None and default is not None:
                calls.setdefault(_normal(key), []).append(default)
        elif method == "add_argument":
            given = keyword(call, "default")
            action = string_value(argument(call, "action", 99))
            if given is not None:
                value = given.value
            elif action in ("store_true", "store_false"):
                value = cst.Name("True" if action == "store_false" else "False")
            else:
                continue
            for flag in {
                _normal(string_value(a.value) or "") for a in call.args if a.keyword is None
            }:
                calls.setdefault(flag, []).append(value)
    return [attributes, literals, calls]


def _normal(name: str) -> str:
    return name.lstrip("-").replace("-", "_")


_MAX_DEPTH = 4


def truth(ctx: FileContext, expr: cst.BaseExpression, depth: int = 0) -> bool | None:
    """What `expr` evaluates to when the program runs with the file's defaults: `True`/`False`,
    a setting whose literal defaults agree, `setting == "literal"`, `not`, `and`, `or`; None
    when the file does not say."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        return expr.value == "True"
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
        inner = truth(ctx, expr.expression, depth + 1)
        return None if inner is None else not inner
    if isinstance(expr, cst.BooleanOperation):
        left, right = truth(ctx, expr.left, depth + 1), truth(ctx, expr.right, depth + 1)
        if isinstance(expr.operator, cst.And):
            return False if False in (left, right) else (None if None in (left, right) else True)
        return True if True in (left, right) else (None if None in (left, right) else False)
    if isinstance(expr, cst.Comparison) and len(expr.comparisons) == 1:
        target = expr.comparisons[0]
        wanted = string_value(target.comparator)
        value = literal_default(ctx, expr.left, depth + 1)
        if wanted is None or not isinstance(value, str):
            return None
        if isinstance(target.operator, cst.Equal):
            return value == wanted
        if isinstance(target.operator, cst.NotEqual):
            return value != wanted
        return None
    value = literal_default(ctx, expr, depth + 1)
    return value if isinstance(value, bool) else None


def literal_default(ctx: FileContext, expr: cst.BaseExpression, depth: int = 0):
    """The one literal (bool or string) the file gives setting `expr` (None: several, or none)."""
    name = setting_name(expr) if not isinstance(expr, cst.SimpleString) else None
    if isinstance(expr, cst.SimpleString):
        return string_value(expr)
    if name is None or depth > _MAX_DEPTH:
        return None
    values: set[bool | str] = set()
    for value in defaults(ctx, name, depth):
        if isinstance(value, cst.Name) and value.value in ("True", "False"):
            values.add(value.value == "True")
        elif (text := string_value(value)) is not None:
            values.add(text)
        elif isinstance(value, (cst.UnaryOperation, cst.BooleanOperation)):
            # `Trainer(debug=not FAST)`, `debug=not False`: what the expression evaluates to
            inferred = truth(ctx, value, depth + 1)
            if inferred is not None:
                values.add(inferred)
    return values.pop() if len(values) == 1 else None


def default_is_true(ctx: FileContext, name: str) -> bool:
    return truth(ctx, cst.Name(name)) is True


def guarded_off(ctx: FileContext, node: cst.CSTNode, depth: int = 0) -> bool:
    """`node` sits in the body of an `if` whose condition is false with the file's defaults."""
    return depth <= _MAX_DEPTH and any(t is False for t in _guards(ctx, node, depth))


def guarded(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` sits in the body of an `if` on a switch (`if self.debug:`, `if not args.fast:`)
    that the file's defaults do not make true (no default in the file, or one that is off).
    Other conditions (`if __name__ == "__main__":`, `if step % 100 == 0:`) are not switches."""
    return any(t is not True for t in _guards(ctx, node, 0, switches_only=True))


def _is_switch(test: cst.BaseExpression) -> bool:
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test = test.expression
    return isinstance(test, (cst.Name, cst.Attribute, cst.Subscript)) and bool(setting_name(test))


def _guards(
    ctx: FileContext, node: cst.CSTNode, depth: int, switches_only: bool = False
) -> Iterator[bool | None]:
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.If) and child is ancestor.body:
            if not switches_only or _is_switch(ancestor.test):
                yield truth(ctx, ancestor.test, depth + 1)
        child = ancestor


def under_named_switch(ctx: FileContext, node: cst.CSTNode, fragment: str) -> bool:
    """`node` sits in the body of an `if` whose condition names `fragment` (an explicit opt-in
    such as `if args.detect_anomaly:`)."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.If) and fragment in ctx.code(ancestor.test).lower():
            return True
    return False
