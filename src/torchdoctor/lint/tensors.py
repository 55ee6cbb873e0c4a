"""Expressions the code shows to be tensors (not modules, not numbers, not unknown objects).

Evidence, followed through assignments: the result of calling a model or a loss module
(`model(x)`, `criterion(out, y)`, `nn.CrossEntropyLoss()(out, y)`), of a `torch` /
`torch.nn.functional` function, arithmetic, comparisons, indexing and method chains on a
tensor (`(out.argmax(1) == y).float().mean()`), `param.grad`, and names that the loop calls
`backward()` on. A model-like name (`model.cpu()`) is never a tensor. Unknown answers "no".
"""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet

import libcst as cst

from torchdoctor.lint.patterns import argument, is_model_like, terminal_name

# torch namespaces whose lower-case functions return tensors
_TENSOR_NAMESPACES = (
    "torch.",
    "torch.nn.functional.",
    "torch.linalg.",
    "torch.fft.",
    "torch.special.",
)
_NOT_TENSOR_FUNCTIONS = {
    "device",
    "load",
    "save",
    "compile",
    "no_grad",
    "inference_mode",
    "enable_grad",
    "set_grad_enabled",
    "manual_seed",
    "get_default_dtype",
    "is_tensor",
    "is_grad_enabled",
    "numel",
    "get_rng_state",
    "typename",
}
_LOSS_CALLEE_RE = re.compile(r"(^|_)(loss|criterion)(_|fn|$)", re.IGNORECASE)
# attributes of a tensor that are tensors again
_TENSOR_ATTRIBUTES = {"data", "T", "mT", "real", "imag"}
# methods of a tensor whose result is a Python or NumPy object, not a tensor (`out.tolist()` is
# a list: a loop over it is over Python numbers)
_HOST_VALUE_METHODS = {
    "tolist", "item", "numpy", "size", "dim", "ndimension", "numel", "nelement", "stride",
    "element_size", "data_ptr", "get_device", "is_contiguous", "is_floating_point",
    "is_complex", "untyped_storage", "storage", "__len__",
}  # fmt: skip
_MAX_DEPTH = 8


def _is_tensor_function(name: str) -> bool:
    for namespace in _TENSOR_NAMESPACES:
        rest = name[len(namespace) :] if name.startswith(namespace) else ""
        if rest and "." not in rest and rest[:1].islower() and rest not in _NOT_TENSOR_FUNCTIONS:
            return True
    return False


def is_tensor(
    ctx, expr: cst.BaseExpression | None, known: AbstractSet[str] = frozenset(), depth: int = 0
) -> bool:
    """`expr` evaluates to a tensor; `known`: names already known to hold tensors (losses)."""
    if expr is None or depth > _MAX_DEPTH:
        return False
    if isinstance(expr, cst.Name):
        if expr.value in known:
            return True
        if is_model_like(ctx, expr):
            return False
        values = ctx.assigned_values(expr) or _unpacked_from(ctx, expr)
        if any(is_tensor(ctx, v, known, depth + 1) for v in values):
            return True
        return any(is_tensor(ctx, v, known, depth + 1) for v in _iterated_from(ctx, expr))
    if isinstance(expr, cst.Call):
        return _call_gives_tensor(ctx, expr, known, depth)
    if isinstance(expr, cst.Attribute):
        if expr.attr.value == "grad":
            return True
        return expr.attr.value in _TENSOR_ATTRIBUTES and is_tensor(
            ctx, expr.value, known, depth + 1
        )
    if isinstance(expr, cst.Subscript):
        return is_tensor(ctx, expr.value, known, depth + 1)
    if isinstance(expr, cst.UnaryOperation):
        return is_tensor(ctx, expr.expression, known, depth + 1)
    if isinstance(expr, cst.BinaryOperation):
        return is_tensor(ctx, expr.left, known, depth + 1) or is_tensor(
            ctx, expr.right, known, depth + 1
        )
    if isinstance(expr, cst.Comparison):
        operands = [expr.left, *(c.comparator for c in expr.comparisons)]
        return any(is_tensor(ctx, o, known, depth + 1) for o in operands)
    return False


def _call_gives_tensor(ctx, call: cst.Call, known, depth: int) -> bool:
    func = call.func
    if isinstance(func, cst.Call):  # `nn.CrossEntropyLoss()(out, y)`: calling a module instance
        name = ctx.call_name(func) or ""
        return name.startswith("torch.nn.") and name[9:10].isupper()
    name = ctx.call_name(call)
    if name is not None and ctx.is_imported(func):
        return _is_tensor_function(name)
    if is_model_like(ctx, func) or _LOSS_CALLEE_RE.search(terminal_name(func) or ""):
        return True
    if isinstance(func, cst.Attribute):  # a method of a tensor (`out.argmax(1)`)
        if func.attr.value in _HOST_VALUE_METHODS:
            return False
        return is_tensor(ctx, func.value, known, depth + 1)
    return False


def _unpacked_from(ctx, name: cst.Name) -> list[cst.BaseExpression]:
    """For `_, predicted = torch.max(out, 1)`: the values `name` is unpacked from (a tuple of
    tensors when the value is a tensor-returning call), or its element of a tuple of values."""
    scope = ctx.scope(name)
    values: list[cst.BaseExpression] = []
    for assignment in scope[name.value] if scope is not None else ():
        node = getattr(assignment, "node", None)
        element = ctx.parent(node) if node is not None else None
        target = ctx.parent(element) if isinstance(element, cst.Element) else None
        statement = ctx.parent(ctx.parent(target)) if isinstance(target, cst.Tuple) else None
        if isinstance(statement, cst.Assign) and isinstance(statement.value, cst.Call):
            values.append(statement.value)
        elif (
            isinstance(statement, cst.Assign)
            and isinstance(statement.value, cst.Tuple)
            and isinstance(target, cst.Tuple)
            and len(statement.value.elements) == len(target.elements)
        ):
            # `x, y = torch.randn(n, 4), torch.randint(0, 8, (n,))`: the element in its place
            position = [e.value is node for e in target.elements].index(True)
            values.append(statement.value.elements[position].value)
    return values


def tensor_parameter(ctx, name: cst.Name) -> bool:
    """`name` is a parameter of a function that every call in this file passes a tensor for
    (`weighted_loss(model(x), y, w)` for `def weighted_loss(pred, target, weights)`; a method's
    `self` is not passed: `meter.update(loss)` for `def update(self, value)`)."""
    passed = passed_arguments(ctx, name)
    return bool(passed) and all(is_tensor(ctx, value) for value in passed)


def passed_arguments(ctx, name: cst.Name) -> list[cst.BaseExpression]:
    """What the calls in this file pass for parameter `name` of the function around it (by
    keyword or position; a method's `self` is not passed); empty when `name` is no parameter,
    nothing calls the function, or some call passes nothing for it."""
    function = ctx.enclosing(name, cst.FunctionDef)
    if function is None:
        return []
    params = [p.name.value for p in function.params.params]
    if name.value not in params:
        return []
    position = params.index(name.value)
    if params[0] in ("self", "cls"):
        position -= 1
        if position < 0:
            return []
    calls = [c for c in ctx.index.calls if terminal_name(c.func) == function.name.value]
    passed = []
    for call in calls:
        given = argument(call, name.value, position)
        if given is None:
            return []
        passed.append(given)
    return passed


def _iterated_from(ctx, name: cst.Name) -> list[cst.BaseExpression]:
    """For `for xb, yb in zip(x.split(64), y.split(64))`: what the loop variable `name` takes its
    items from (`x.split(64)`, a tuple of tensors when that is a tensor expression; `for row in
    x` gives the rows of tensor `x`); through `zip(...)` by position and `enumerate(...)`."""
    scope = ctx.scope(name)
    sources: list[cst.BaseExpression] = []
    for assignment in scope[name.value] if scope is not None else ():
        node = getattr(assignment, "node", None)
        parent = ctx.parent(node) if node is not None else None
        position, target = None, node
        if isinstance(parent, cst.Element) and isinstance(ctx.parent(parent), cst.Tuple):
            target = ctx.parent(parent)
            position = [e.value for e in target.elements].index(node)
            parent = ctx.parent(target)
        if not (isinstance(parent, cst.For) and parent.target is target):
            continue
        iterable = parent.iter
        helper = ctx.call_name(iterable) if isinstance(iterable, cst.Call) else None
        args = iterable.args if isinstance(iterable, cst.Call) else ()
        if helper == "builtins.zip" and position is not None:
            if position < len(args) and args[position].star == "":
                sources.append(args[position].value)
        elif helper == "builtins.enumerate" and position == 1 and args:
            sources.append(args[0].value)
        elif position is None and helper not in ("builtins.zip", "builtins.enumerate"):
            sources.append(iterable)
    return sources
