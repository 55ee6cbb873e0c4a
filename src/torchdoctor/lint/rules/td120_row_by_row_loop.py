"""TD120: a Python loop over the rows of a tensor."""

from __future__ import annotations

import libcst as cst

from torchdoctor.lint.loops import (
    after_return,
    all_names,
    carried_names,
    counted_dimension,
    indexed_along,
)
from torchdoctor.lint.patterns import (
    int_value,
    is_model_like,
    method_call,
    terminal_name,
    walk,
)
from torchdoctor.lint.rule import Rule
from torchdoctor.lint.shapes import known_shape
from torchdoctor.lint.tensors import is_tensor, tensor_parameter


def _is_tensor(ctx, name: cst.Name, sized: bool = False) -> bool:
    if sized:
        return True
    value = ctx.single_value(name)
    if isinstance(value, cst.Call) and (ctx.call_name(value) or "").startswith("torch."):
        return True
    if value is not None and _layer_parameter(ctx, value):
        return True
    return is_tensor(ctx, name) or tensor_parameter(ctx, name) or _module_input(ctx, name)


def _layer_parameter(ctx, value: cst.BaseExpression) -> bool:
    """`self.weight` / `self.bias` in a subclass of a `torch.nn` layer (`class
    FakeQuantLinear(nn.Linear)`), or `self.<name>` that the class binds to `nn.Parameter(...)`:
    the layer's parameter tensors."""
    if not (isinstance(value, cst.Attribute) and terminal_name(value.value) == "self"):
        return False
    cls = ctx.enclosing(value, cst.ClassDef)
    if cls is None:
        return False
    layer_bases = [
        b for b in cls.bases if (ctx.qualified_name(b.value) or "").startswith("torch.nn.")
    ]
    if value.attr.value in ("weight", "bias") and any(
        ctx.qualified_name(b.value) != "torch.nn.Module" for b in layer_bases
    ):
        return True
    return any(
        target.attr.value == value.attr.value
        and ctx.call_name(bound) in ("torch.nn.Parameter", "torch.nn.parameter.Parameter")
        and ctx.is_inside(target, cls)
        for target, bound in ctx.index.attribute_assigns
        if isinstance(bound, cst.Call)
    )


def _module_input(ctx, name: cst.Name) -> bool:
    """A parameter of a class's `forward` or `backward` (a module's or an autograd Function's):
    the tensors the model computes on."""
    function = ctx.enclosing(name, cst.FunctionDef)
    if function is None or function.name.value not in ("forward", "backward"):
        return False
    block = ctx.parent(function)
    if block is None or not isinstance(ctx.parent(block), cst.ClassDef):
        return False
    return name.value in {p.name.value for p in function.params.params[1:]}


def _model_output(ctx, name: cst.Name) -> bool:
    """`name` holds what a model call returned (`preds = model(batch)`): a model may return a
    list of outputs (one per head or position), which `len()` walks; a tensor is counted by
    `size(0)`/`shape[0]` far more often."""
    values = ctx.assigned_values(name) or []
    return bool(values) and all(
        isinstance(v, cst.Call) and is_model_like(ctx, v.func) for v in values
    )


def _item_per_row(ctx, loop: cst.For, counted) -> str | None:
    """`x` when the loop runs along a dimension of tensor `x` and calls `.item()` on `x[i]`
    (in any statement, `if` tests included)."""
    name, dim, by_size = counted
    rows = indexed_along(ctx, loop.body, _variable(loop), dim)
    if name not in rows:
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
        if any(isinstance(n.value, cst.Name) and n.value.value == name for n in subscripts):
            if _is_tensor(ctx, rows[name], by_size):
                return name
    return None


class RowByRowLoop(Rule):
    """
    ## What it does
    Flags `for i in range(len(x))` (or `range(x.shape[0])`, `range(x.size(0))`, or the literal
    row count) over a tensor `x` (built by a torch function, computed from one, or known by
    its `size()` method, a parameter every call in the file passes a tensor for, an input of
    a module's `forward` or an autograd Function's `backward`, or a layer's own parameter:
    `self.weight` of a `torch.nn` layer's subclass, `self.w` bound to `nn.Parameter`), whose body
    only accumulates `x[i]` (`z += x[i]`, `out.append(f(x[i]))`, through temporaries such as
    `err = x[i] - y[i]`) or calls `x[i].item()` (one device sync per element); the same along
    another dimension (`for t in range(x.size(1))` over `x[:, t]`). Also flags a loop that fills
    a tensor one row at a time from a tensor indexed by the loop's variable (`out[i] = grad[i] *
    s[i]`, `agg[dst[e]] += msg[e]`, `deg[n] = (dst == n).sum()`). Left alone: a recurrence (a
    value carried from one iteration to the next, `out[t]` read from `out[t - 1]`), a loop that
    calls a different layer per index (`self.embeddings[i]` on column `i`), a loop that appends
    one Python record per row (`out.append({"score": x[i]})`), code after a `return`.

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
            if after_return(ctx, loop) or _module_per_index(ctx, loop):
                continue  # unreachable (an earlier `return` of the block), or over layers
            bound = loop.iter.args[0].value
            counted = counted_dimension(ctx, bound)
            synced = _item_per_row(ctx, loop, counted) if counted else None
            if synced is not None:
                yield ctx.violation(
                    self,
                    loop,
                    f"Python loop calls `.item()` on each row of `{synced}` (one device sync "
                    f"per element); compute on the whole tensor and read it once "
                    f"(`{synced}.tolist()`)",
                )
                continue
            tensor = self._indexed_tensor(ctx, loop, bound, counted)
            if tensor is not None:
                dim = counted[1] if counted else 0
                along = "the rows" if dim == 0 else f"dimension {dim}"
                yield ctx.violation(
                    self,
                    loop,
                    f"Python loop over {along} of `{tensor}`; use a "
                    f"vectorized op (or `torch.unbind({tensor}, {dim})`)",
                )
                continue
            written = _written_row_by_row(ctx, loop, bound, counted)
            if written is not None:
                yield ctx.violation(
                    self,
                    loop,
                    f"Python loop fills `{written}` one row at a time; compute every row in "
                    f"one vectorized op (broadcasting, `index_add_`, `scatter_add_`, `bincount`)",
                )

    @staticmethod
    def _indexed_tensor(ctx, loop: cst.For, bound, counted) -> str | None:
        statements = loop.body.body
        lines = [s for s in statements if isinstance(s, cst.SimpleStatementLine)]
        if not statements or len(lines) != len(statements):
            return None
        name, dim, by_size = counted if counted else (None, 0, False)
        for indexed, node in indexed_along(ctx, loop.body, _variable(loop), dim).items():
            if not _is_tensor(ctx, node, name == indexed and by_size):
                continue
            if name == indexed and not by_size and _model_output(ctx, node):
                continue  # `len(out)` of what a model returned: a list or tuple of outputs
            shape = known_shape(ctx, node)
            if name == indexed or (dim == 0 and shape and int_value(bound) == shape[0]):
                if _accumulates_rows(ctx, lines) and not _recurrence(ctx, lines):
                    return indexed
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
            if isinstance(small.value, cst.Call) and _appends_a_record(ctx, small.value):
                return False
            continue
        if isinstance(small, cst.Assign) and isinstance(small.value, cst.BinaryOperation):
            targets = {_base_name(t.target) for t in small.targets} - {None}
            if _base_name(small.value.left) in targets:
                continue
        return False
    return True


def _appends_a_record(ctx, call: cst.Call) -> bool:
    """`results[video].append({"segment": s[j], "output": out[j]})`: one Python record per row
    (results written out as JSON), which no vectorized op builds."""
    value = call.args[0].value if call.args else None
    return isinstance(value, cst.Dict) or (
        isinstance(value, cst.Call) and ctx.call_name(value) == "builtins.dict"
    )


def _written_row_by_row(ctx, loop: cst.For, bound, counted) -> str | None:
    """`y` when the loop's body only binds temporaries and writes `y[...i...]` of one tensor `y`
    (the last statement writes), carries no value from one iteration to the next, reads `y` only
    at the cell it writes (`agg[dst[e]] = agg[dst[e]] + msg[e]`), and computes each row from a
    tensor indexed by `i` (`grad[i]`, `x[t]`) or compared with it (`(dst == node).sum()`). A
    recurrence (`out[t] = out[t - 1] * decay + x[t]`, `gae = delta + gamma * gae`) is left alone:
    it is not one vectorized op."""
    statements = loop.body.body
    lines = [s for s in statements if isinstance(s, cst.SimpleStatementLine)]
    if not statements or len(lines) != len(statements):
        return None
    variable = _variable(loop)
    targets: list[cst.Subscript] = []
    for line in lines:
        for small in line.body:
            target = _row_write_target(small, variable)
            if target is not None:
                targets.append(target)
            elif not _binds_temporary(cst.SimpleStatementLine(body=[small])):
                return None
    if not targets or _row_write_target(lines[-1].body[-1], variable) is None:
        return None
    written = {t.value.value for t in targets if isinstance(t.value, cst.Name)}
    if len(written) != 1 or carried_names(ctx, lines):
        return None
    name = written.pop()
    base = targets[0].value
    assert isinstance(base, cst.Name)
    if not _is_tensor(ctx, base) or not _reads_only_written_cells(ctx, lines, name, targets):
        return None
    if not _bound_counts_rows(ctx, bound, counted, base):
        return None
    return name if _row_computed_from_tensor(ctx, lines, variable, name) else None


def _row_write_target(small: cst.BaseSmallStatement, variable: str) -> cst.Subscript | None:
    """`y[...]` of `y[... i ...] = value` / `y[... i ...] += value`, `i` the loop's variable."""
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        target = small.targets[0].target
    elif isinstance(small, cst.AugAssign):
        target = small.target
    else:
        return None
    if not (isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name)):
        return None
    for element in target.slice:
        index = element.slice
        if isinstance(index, cst.Index) and variable in all_names(index.value):
            return target
    return None


def _reads_only_written_cells(ctx, lines, name: str, targets: list[cst.Subscript]) -> bool:
    cells = {ctx.code(t) for t in targets}
    for line in lines:
        for small in line.body:
            value = getattr(small, "value", None)
            if value is None:
                continue
            for node in [value, *walk(ctx, value)]:
                if isinstance(node, cst.Name) and node.value == name:
                    parent = ctx.parent(node)
                    if not (isinstance(parent, cst.Subscript) and ctx.code(parent) in cells):
                        return False
    return True


def _bound_counts_rows(ctx, bound, counted, written: cst.Name) -> bool:
    """The loop runs over the rows of a tensor: `range(x.shape[0])`, `range(len(x))` of a
    tensor `x`, or `range(n)` for `y = torch.zeros(n, ...)`, the tensor it writes."""
    if counted is not None:
        name, _, by_size = counted
        if name == written.value or by_size:
            return True
        for node in walk(ctx, ctx.statement_of(bound)):
            if isinstance(node, cst.Name) and node.value == name:
                return _is_tensor(ctx, node)
        return False
    value = ctx.single_value(written)
    if isinstance(value, cst.Call) and value.args and value.args[0].keyword is None:
        first = value.args[0].value
        sizes = first.elements[0].value if isinstance(first, (cst.Tuple, cst.List)) else first
        return (ctx.call_name(value) or "").startswith("torch.") and ctx.code(sizes) == ctx.code(
            bound
        )
    return False


def _row_computed_from_tensor(ctx, lines, variable: str, written: str) -> bool:
    for line in lines:
        for small in line.body:
            value = getattr(small, "value", None)
            for node in [value, *walk(ctx, value)] if value is not None else ():
                if (
                    isinstance(node, cst.Subscript)
                    and isinstance(node.value, cst.Name)
                    and node.value.value != written
                    and any(
                        isinstance(e.slice, cst.Index) and terminal_name(e.slice.value) == variable
                        for e in node.slice
                    )
                    and _is_tensor(ctx, node.value)
                ):
                    return True
                if isinstance(node, cst.Comparison) and variable in all_names(node):
                    parent = ctx.parent(node)
                    if isinstance(parent, cst.Attribute) and parent.value is node:
                        return True  # `(dst == node).sum()`: a tensor compared with the index
    return False


def _base_name(expr: cst.BaseExpression) -> str | None:
    """`total` of `total`, `self.total`, `counts[k]`, `counts.get(k, 0)`: what an accumulating
    assignment (`counts[k] = counts.get(k, 0) + 1`) reads and writes."""
    if isinstance(expr, cst.Subscript):
        return _base_name(expr.value)
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        return _base_name(expr.func.value)
    return terminal_name(expr)


def _module_per_index(ctx, loop: cst.For) -> bool:
    """The body calls a different module for each index (`self.embeddings[i](x[:, i])`): a loop
    over a list of layers, one per feature column, not over a tensor's data."""
    variable = _variable(loop)
    return any(
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Subscript)
        and any(
            isinstance(e.slice, cst.Index) and terminal_name(e.slice.value) == variable
            for e in node.func.slice
        )
        for node in walk(ctx, loop.body)
    )


def _recurrence(ctx, lines: list[cst.SimpleStatementLine]) -> bool:
    """A temporary carried from one iteration to the next (`h = cell(x[:, t], h)`): a
    recurrence over the rows, not independent rows (an accumulation such as `z = z + x[i]` is
    carried by design)."""
    accumulated = {
        terminal_name(t.target)
        for line in lines
        if _accumulates(ctx, line)
        for small in line.body
        if isinstance(small, cst.Assign)
        for t in small.targets
    }
    return bool(carried_names(ctx, lines) - accumulated)


def _variable(loop: cst.For) -> str:
    """The loop's variable (`check` only takes loops whose target is one name)."""
    assert isinstance(loop.target, cst.Name)
    return loop.target.value
