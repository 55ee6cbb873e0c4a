"""TD120: a Python loop over the rows of a tensor."""

from __future__ import annotations

import libcst as cst

from torchdoctor.lint.patterns import (
    int_value,
    is_model_like,
    method_call,
    receiver,
    terminal_name,
    walk,
)
from torchdoctor.lint.rule import Rule
from torchdoctor.lint.shapes import known_shape
from torchdoctor.lint.tensors import is_tensor, tensor_parameter


def _row_count_of(ctx, expr) -> str | None:
    """Name of `x` in `len(x)`, `x.shape[0]`, `x.size(0)`, `x.size()[0]`."""
    if isinstance(expr, cst.Call) and ctx.call_name(expr) == "builtins.len" and len(expr.args) == 1:
        return (
            terminal_name(expr.args[0].value) if isinstance(expr.args[0].value, cst.Name) else None
        )
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1:
        index = expr.slice[0].slice
        if isinstance(index, cst.Index) and int_value(index.value) == 0:
            base = expr.value
            if (
                isinstance(base, cst.Attribute)
                and base.attr.value == "shape"
                and isinstance(base.value, cst.Name)
            ):
                return base.value.value
            sized = receiver(base) if method_call(base, "size") else None
            if isinstance(base, cst.Call) and not base.args and isinstance(sized, cst.Name):
                return sized.value
    if (
        isinstance(expr, cst.Call)
        and method_call(expr, "size")
        and len(expr.args) == 1
        and int_value(expr.args[0].value) == 0
    ):
        sized = receiver(expr)
        return sized.value if isinstance(sized, cst.Name) else None
    return None


def _counted_by_size(bound) -> bool:
    """`x.size(0)` / `x.size()[0]`: only tensors have a `size()` method (NumPy's is a field)."""
    if isinstance(bound, cst.Subscript):
        bound = bound.value
    return method_call(bound, "size")


def _is_tensor(ctx, name: cst.Name, sized: bool = False) -> bool:
    if sized:
        return True
    value = ctx.single_value(name)
    if isinstance(value, cst.Call) and (ctx.call_name(value) or "").startswith("torch."):
        return True
    return is_tensor(ctx, name) or tensor_parameter(ctx, name)


def _model_output(ctx, name: cst.Name) -> bool:
    """`name` holds what a model call returned (`preds = model(batch)`): a model may return a
    list of outputs (one per head or position), which `len()` walks; a tensor is counted by
    `size(0)`/`shape[0]` far more often."""
    values = ctx.assigned_values(name) or []
    return bool(values) and all(
        isinstance(v, cst.Call) and is_model_like(ctx, v.func) for v in values
    )


def _rows_indexed(ctx, loop: cst.For) -> dict[str, cst.Name]:
    """Names `x` indexed as `x[i]` by the loop's variable `i` in its body."""
    if not isinstance(loop.target, cst.Name):
        return {}
    index = loop.target.value
    rows = {}
    for node in walk(ctx, loop.body):
        if (
            isinstance(node, cst.Subscript)
            and isinstance(node.value, cst.Name)
            and len(node.slice) == 1
            and isinstance(node.slice[0].slice, cst.Index)
            and terminal_name(node.slice[0].slice.value) == index
        ):
            rows[node.value.value] = node.value
    return rows


def _item_per_row(ctx, loop: cst.For, bound) -> str | None:
    """`x` when the loop runs over the rows of tensor `x` and calls `x[i].item()` (in any
    statement, `if` tests included)."""
    counted = _row_count_of(ctx, bound)
    rows = _rows_indexed(ctx, loop)
    if counted not in rows:
        return None
    for node in walk(ctx, loop.body):
        if not (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "item"
        ):
            continue
        receiver = node.func.value
        subscripts = [n for n in [receiver, *walk(ctx, receiver)] if isinstance(n, cst.Subscript)]
        if any(isinstance(n.value, cst.Name) and n.value.value == counted for n in subscripts):
            if _is_tensor(ctx, rows[counted], _counted_by_size(bound)):
                return counted
    return None


class RowByRowLoop(Rule):
    """
    ## What it does
    Flags `for i in range(len(x))` (or `range(x.shape[0])`, `range(x.size(0))`, or the literal
    row count) over a tensor `x` (built by a torch function, computed from one, or known by
    its `size()` method, or a parameter every call in the file passes a tensor for), whose body
    only accumulates `x[i]` (`z += x[i]`, `out.append(f(x[i]))`, through temporaries such as
    `err = x[i] - y[i]`) or calls `x[i].item()` (one device sync per element).

    ## Why is this bad
    Every `x[i]` is a separate indexing op with its own Python and dispatch overhead (and a
    kernel launch on GPU); a loop over 500 rows runs hundreds of times slower than one
    vectorized op such as `x.sum(dim=0)`, and `torch.unbind(x)` at least slices all rows at once.

    ## Example
    ```python
    x = torch.rand([500, 10])
    z = torch.zeros([10])
    for i in range(x.shape[0]):
        z += x[i]
    ```

    ## Use instead
    ```python
    x = torch.rand([500, 10])
    z = x.sum(dim=0)
    ```

    ## Fix safety
    No automatic fix: the vectorized form depends on what the loop computes.
    """

    code = "TD120"
    name = "row-by-row-loop"

    def check(self, ctx):
        for loop in ctx.index.loops:
            if not isinstance(loop, cst.For) or not isinstance(loop.target, cst.Name):
                continue
            if not (
                isinstance(loop.iter, cst.Call)
                and ctx.call_name(loop.iter) == "builtins.range"
                and len(loop.iter.args) == 1
            ):
                continue
            bound = loop.iter.args[0].value
            synced = _item_per_row(ctx, loop, bound)
            if synced is not None:
                yield ctx.violation(
                    self,
                    loop,
                    f"Python loop calls `.item()` on each row of `{synced}` (one device sync "
                    f"per element); compute on the whole tensor and read it once "
                    f"(`{synced}.tolist()`)",
                )
                continue
            tensor = self._indexed_tensor(ctx, loop, bound)
            if tensor is not None:
                yield ctx.violation(
                    self,
                    loop,
                    f"Python loop over the rows of `{tensor}`; use a "
                    f"vectorized op (or `torch.unbind({tensor})`)",
                )

    @staticmethod
    def _indexed_tensor(ctx, loop: cst.For, bound) -> str | None:
        statements = loop.body.body
        lines = [s for s in statements if isinstance(s, cst.SimpleStatementLine)]
        if not statements or len(lines) != len(statements):
            return None
        counted = _row_count_of(ctx, bound)
        for name, node in _rows_indexed(ctx, loop).items():
            if not _is_tensor(ctx, node, counted == name and _counted_by_size(bound)):
                continue
            if counted == name and not _counted_by_size(bound) and _model_output(ctx, node):
                continue  # `len(out)` of what a model returned: a list or tuple of outputs
            shape = known_shape(ctx, node)
            if counted == name or (shape and int_value(bound) == shape[0]):
                if _accumulates_rows(ctx, lines):
                    return name
        return None


def _accumulates_rows(ctx, lines: list[cst.SimpleStatementLine]) -> bool:
    """Every line accumulates (`z += ...`, `out.append(...)`, `total = total + ...`) or binds a
    temporary for the next (`err = pred[i] - target[i]`), and the last one accumulates."""
    *temporaries, last = lines
    return _accumulates(ctx, last) and all(
        _accumulates(ctx, line) or _binds_temporary(line) for line in temporaries
    )


def _binds_temporary(statement: cst.SimpleStatementLine) -> bool:
    return all(
        isinstance(small, cst.Assign)
        and len(small.targets) == 1
        and isinstance(small.targets[0].target, cst.Name)
        for small in statement.body
    )


def _accumulates(ctx, statement: cst.SimpleStatementLine) -> bool:
    for small in statement.body:
        if isinstance(small, cst.AugAssign):
            continue
        if isinstance(small, cst.Expr) and method_call(small.value, "append"):
            continue
        if isinstance(small, cst.Assign) and isinstance(small.value, cst.BinaryOperation):
            targets = {terminal_name(t.target) for t in small.targets}
            if terminal_name(small.value.left) in targets:
                continue
        return False
    return True
