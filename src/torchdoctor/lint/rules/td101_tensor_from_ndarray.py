"""TD101: `torch.tensor()` on a NumPy array."""

from __future__ import annotations

import libcst as cst

from torchdoctor.lint.edits import rename_attribute
from torchdoctor.lint.loops import after_return
from torchdoctor.lint.patterns import (
    argument,
    keyword,
    method_call,
    receiver,
    terminal_name,
    walk,
)
from torchdoctor.lint.rule import Rule
from torchdoctor.lint.steps import step_loop_around
from torchdoctor.lint.tensors import passed_arguments

_ARRAY_FUNCS = {
    f"numpy.{n}"
    for n in (
        "array asarray ascontiguousarray zeros ones empty full arange linspace stack concatenate "
        "vstack hstack dstack load frombuffer fromfile loadtxt genfromtxt zeros_like ones_like "
        "empty_like full_like eye identity meshgrid"
    ).split()
}
_SIZED_RANDOM = {"numpy.random.rand", "numpy.random.randn"}  # array when given any size argument
_SIZE_KW_RANDOM = {
    f"numpy.random.{n}" for n in "random normal uniform randint choice standard_normal".split()
}


def is_ndarray(ctx, expr, depth: int = 0) -> bool:
    """`expr` holds a NumPy array, shown by the code (not by its name)."""
    if depth > 6 or expr is None:
        return False
    if isinstance(expr, cst.Call):
        name = ctx.call_name(expr)
        if name in _ARRAY_FUNCS:
            return True
        if name in _SIZED_RANDOM:
            return bool(expr.args)
        if name in _SIZE_KW_RANDOM:
            first = expr.args[0].value if expr.args and not expr.args[0].keyword else None
            return keyword(expr, "size") is not None or isinstance(first, (cst.List, cst.Tuple))
        if method_call(expr, "numpy"):
            return True
        if _generator_array(ctx, expr):
            return True
        if method_call(expr, "astype", "reshape", "copy", "transpose"):
            return is_ndarray(ctx, receiver(expr), depth + 1)
        return False
    if isinstance(expr, cst.Name):
        values = ctx.assigned_values(expr)
        return bool(values) and all(is_ndarray(ctx, v, depth + 1) for v in values)
    if isinstance(expr, cst.Subscript):  # a row of an array, an item of a list of arrays
        rows = expr.value
        return (
            is_ndarray(ctx, rows, depth + 1)
            or _holds_arrays(ctx, rows, depth + 1)
            or _self_array(ctx, rows, depth + 1)
        )
    return False


def _self_array(ctx, expr, depth: int) -> bool:
    """`self.data` that the class binds to NumPy arrays only (indexed per item by a dataset)."""
    if not isinstance(expr, cst.Attribute) or terminal_name(expr.value) != "self":
        return False
    values = [
        value
        for target, value in ctx.index.attribute_assigns
        if target.attr.value == expr.attr.value and terminal_name(target.value) == "self"
    ]
    if not values or not all(is_ndarray(ctx, v, depth + 1) or _list_placeholder(v) for v in values):
        return False
    if all(is_ndarray(ctx, v, depth + 1) for v in values):
        return True
    stored = _stored_into(ctx, expr.attr.value)  # slots filled later: a ring or replay buffer
    return bool(stored) and all(_array_or_passed_array(ctx, v, depth + 1) for v in stored)


def _list_placeholder(value: cst.BaseExpression) -> bool:
    """`[]`, `[None] * n`: a list of slots that the code fills later."""
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Multiply):
        value = value.left
    return isinstance(value, cst.List) and all(
        isinstance(e.value, cst.Name) and e.value.value == "None" for e in value.elements
    )


def _stored_into(ctx, attribute: str) -> list[cst.BaseExpression]:
    """The values stored into `self.<attribute>`: `self.slots[i] = v`, `self.slots.append(v)`."""
    stored = []
    for node in walk(ctx, ctx.module, skip_functions=False):
        if isinstance(node, cst.Assign) and len(node.targets) == 1:
            target = node.targets[0].target
            if isinstance(target, cst.Subscript) and _names_self_attribute(target.value, attribute):
                stored.append(node.value)
        elif isinstance(node, cst.Call) and method_call(node, "append") and len(node.args) == 1:
            if _names_self_attribute(receiver(node), attribute):
                stored.append(node.args[0].value)
    return stored


def _names_self_attribute(expr: cst.BaseExpression, attribute: str) -> bool:
    return (
        isinstance(expr, cst.Attribute)
        and expr.attr.value == attribute
        and terminal_name(expr.value) == "self"
    )


def _array_or_passed_array(ctx, value: cst.BaseExpression, depth: int) -> bool:
    """An array, or a parameter every call of its method passes an array for
    (`ring.push(np.arange(...))` for `def push(self, tokens)`)."""
    if is_ndarray(ctx, value, depth):
        return True
    passed = passed_arguments(ctx, value) if isinstance(value, cst.Name) else []
    return bool(passed) and all(_array_arithmetic(ctx, v, depth + 1) for v in passed)


def _array_arithmetic(ctx, value: cst.BaseExpression, depth: int) -> bool:
    """An array or arithmetic on one (`np.arange(n) * k % v`)."""
    if isinstance(value, cst.BinaryOperation):
        return _array_arithmetic(ctx, value.left, depth + 1) or _array_arithmetic(
            ctx, value.right, depth + 1
        )
    return is_ndarray(ctx, value, depth)


_GENERATORS = {"numpy.random.default_rng", "numpy.random.RandomState", "numpy.random.Generator"}


def _generator_array(ctx, call: cst.Call) -> bool:
    """`rng.standard_normal(128)`, `rng.normal(0, 1, size=(4, 5))` on `rng = np.random.default_rng()`:
    the generator's methods return arrays when given a size."""
    if not isinstance(call.func, cst.Attribute) or not isinstance(call.func.value, cst.Name):
        return False
    made = ctx.assigned_values(call.func.value) or []
    if not made or not all(
        isinstance(v, cst.Call) and ctx.call_name(v) in _GENERATORS for v in made
    ):
        return False
    method = call.func.attr.value
    if method in ("standard_normal", "random", "standard_exponential", "rand", "randn"):
        return bool(call.args)
    first = call.args[0].value if call.args and not call.args[0].keyword else None
    return keyword(call, "size") is not None or isinstance(first, (cst.List, cst.Tuple))


def _holds_arrays(ctx, expr, depth: int) -> bool:
    """`expr` is a list of NumPy arrays: `[a.astype(np.float32) for a in ...]`, `[x, y]` of
    arrays, or a name bound to one."""
    if depth > 6:
        return False
    if isinstance(expr, cst.ListComp):
        return is_ndarray(ctx, expr.elt, depth + 1)
    if isinstance(expr, cst.List) and expr.elements:
        return all(is_ndarray(ctx, e.value, depth + 1) for e in expr.elements)
    if isinstance(expr, cst.Name):
        values = ctx.assigned_values(expr)
        return bool(values) and all(_holds_arrays(ctx, v, depth + 1) for v in values)
    return False


class TensorFromNdarray(Rule):
    """
    ## What it does
    Flags `torch.tensor(x)` where `x` is known to be a NumPy array (built by a `numpy` function,
    `.numpy()`, or a list comprehension of arrays; an item of a list of arrays or a row of an
    array, `self.data[i]` where `self.data` is one, or a list of slots that the code fills
    with arrays: `self.slots[i] = tokens` in a ring buffer, `tokens` an array every caller
    passes). A one-off conversion of an array generated
    from a few numbers or drawn at random (`torch.tensor(np.linspace(0, 1, 50))`, `np.arange`,
    `np.random.randn(100, 8)` outside any loop and any `__getitem__`) is left alone: one copy,
    once; so are a layer's initial weights (`layer.weight.data = torch.tensor(w)`,
    `nn.Parameter(torch.tensor(w))`), set once while the model is built. Also flags, in a
    training step, `torch.tensor([rows[i] for i in batch])` where `rows` is a list of lists made
    by `.tolist()`: the batch is rebuilt number by number on every step.

    ## Why is this bad
    `torch.tensor` always copies its input, and on a list of arrays it converts element by
    element, which is very slow. `torch.from_numpy` shares the array's memory (no copy) and
    `torch.as_tensor` copies only when the dtype or device must change.

    ## Example
    ```python
    x = np.random.normal(size=[3, 5])
    t = torch.tensor(x)
    ```

    ## Use instead
    ```python
    x = np.random.normal(size=[3, 5])
    t = torch.from_numpy(x)
    ```

    ## Fix safety
    Unsafe: `from_numpy`/`as_tensor` share memory with the array, so later writes to one are
    seen by the other, and `from_numpy` rejects some arrays (negative strides). Calls with
    `requires_grad` or `pin_memory`, and lists of arrays, get no automatic fix.
    """

    code = "TD101"
    name = "tensor-from-ndarray"
    fix_safety = "unsafe"

    def check(self, ctx):
        for call in ctx.calls_to("torch.tensor"):
            if after_return(ctx, ctx.statement_of(call)):
                continue  # dead code
            data = argument(call, "data", 0)
            if isinstance(data, cst.ListComp) and is_ndarray(ctx, data.elt):
                yield ctx.violation(
                    self,
                    call,
                    "`torch.tensor()` on a list of NumPy arrays converts "
                    "element by element; `np.stack` them and use `torch.from_numpy`",
                )
            elif isinstance(data, cst.ListComp) and _rows_of_python_lists_per_step(ctx, call, data):
                yield ctx.violation(
                    self,
                    call,
                    "`torch.tensor()` on rows of a Python list of lists (from `.tolist()`) "
                    "converts element by element on every step; keep the rows as one tensor "
                    "and index it",
                )
            elif (
                is_ndarray(ctx, data)
                and not _one_off_generated(ctx, call, data)
                and not _initializes_parameter(ctx, call)
            ):
                yield ctx.violation(
                    self,
                    call,
                    f"`torch.tensor()` copies the NumPy array "
                    f"`{ctx.code(data)}`; use `torch.from_numpy` (no copy) or "
                    "`torch.as_tensor`",
                    self._fix(ctx, call),
                )

    def _fix(self, ctx, call: cst.Call):
        extra = {a.keyword.value for a in call.args if a.keyword is not None} - {"data"}
        if (
            extra - {"dtype", "device"}
            or any(a.star for a in call.args)
            or not isinstance(call.func, cst.Attribute)
        ):
            return None
        target = "as_tensor" if extra else "from_numpy"
        args = [
            a.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)
            if a.keyword is not None and a.keyword.value == "data"
            else a
            for a in call.args
        ]
        new = call.with_changes(func=rename_attribute(call.func, target), args=args)
        return ctx.make_fix(self.fix_safety, f"Use `torch.{target}`", {call: new})


def _rows_of_python_lists_per_step(ctx, call: cst.Call, data: cst.ListComp) -> bool:
    """`torch.tensor([pool[i] for i in chosen])` in a training step, where `pool` is bound
    only to `<tensor or array>.tolist()`: a batch rebuilt number by number from Python lists."""
    row = data.elt
    if not (isinstance(row, cst.Subscript) and isinstance(row.value, cst.Name)):
        return False
    values = ctx.assigned_values(row.value)
    if not values or not all(method_call(v, "tolist") for v in values):
        return False
    return step_loop_around(ctx, call) is not None


# NumPy constructors of a range or a grid of points from a few numbers (a time grid, a plot axis),
# and random draws (a module's self-test feeding random inputs once)
_GENERATED = (
    {f"numpy.{n}" for n in ("linspace", "arange", "logspace", "geomspace")}
    | _SIZED_RANDOM
    | _SIZE_KW_RANDOM
)
_PER_ITEM_FUNCTIONS = ("__getitem__", "__iter__", "collate")


def _one_off_generated(ctx, call: cst.Call, data: cst.BaseExpression) -> bool:
    """`torch.tensor(np.linspace(...))`, `torch.tensor(np.random.randn(...))` run once (in no
    loop, not per item of a dataset): one copy of an array the code generates, nothing worth a
    change."""
    if not isinstance(data, cst.Call) or ctx.call_name(data) not in _GENERATED:
        return False
    if (
        ctx.enclosing(call, (cst.For, cst.While, cst.ListComp, cst.GeneratorExp, cst.DictComp))
        is not None
    ):
        return False
    function = ctx.enclosing(call, cst.FunctionDef)
    return function is None or not function.name.value.startswith(_PER_ITEM_FUNCTIONS)


def _initializes_parameter(ctx, call: cst.Call) -> bool:
    """`layer.weight.data = torch.tensor(w)`, `nn.Parameter(torch.tensor(w))`: a layer's initial
    weights, set once while the model is built (DLRM draws each table's in NumPy)."""
    parent = ctx.parent(call)
    if isinstance(parent, cst.Arg):
        outer = ctx.parent(parent)
        return isinstance(outer, cst.Call) and ctx.call_name(outer) == "torch.nn.Parameter"
    if isinstance(parent, cst.Assign) and parent.value is call:
        return any(
            isinstance(t.target, cst.Attribute)
            and t.target.attr.value in ("data", "weight", "bias")
            for t in parent.targets
        )
    return False
