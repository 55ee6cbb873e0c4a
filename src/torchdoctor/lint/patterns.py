"""Shared questions rules ask about code: call arguments, devices, loaders, loops, models.

Each answer needs evidence in the code; "don't know" is always answered as "no".
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from torchdoctor.lint.context import FileContext

DATALOADER = "torch.utils.data.DataLoader"
GRAD_OFF_CONTEXTS = {
    "torch.no_grad",
    "torch.inference_mode",
    "torch.set_grad_enabled",
    "torch.enable_grad",
}
# iterator wrappers whose loop yields the wrapped loader's batches
_ITER_WRAPPERS = {"enumerate", "iter", "tqdm", "tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm"}
# calls that store their arguments rather than run them
_RECORD_BUILDERS = {
    "dict",
    "list",
    "tuple",
    "set",
    "append",
    "extend",
    "insert",
    "add",
    "update",
    "setdefault",
}
_MODEL_NAME_RE = re.compile(
    r"(model|net|network|encoder|decoder|classifier|backbone)$", re.IGNORECASE
)
# `cat_encoder`, `label_encoder`: encoders of data (categories, labels), not models
_DATA_ENCODER_RE = re.compile(
    r"(label|cat|categorical|category|onehot|one_hot|ordinal|target)_?encoder$", re.IGNORECASE
)
# `get_model()`, `build_net()`: functions that return a model, not models
_FACTORY_RE = re.compile(r"(get|build|make|create|load|init|setup|new)_", re.IGNORECASE)
# `self.eval_model(...)`, `train_net(...)`: named for what they do to a model; a model only when
# the file binds that name to a value
_ACTION_RE = re.compile(
    r"(eval|evaluate|test|train|run|validate|fit|predict|save|export)_", re.IGNORECASE
)


# --- call arguments ------------------------------------------------------------------------
def keyword(call: cst.Call, name: str) -> cst.Arg | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def positional(call: cst.Call) -> list[cst.Arg]:
    return [a for a in call.args if a.keyword is None and not a.star]


def has_star_args(call: cst.Call) -> bool:
    return any(a.star for a in call.args)


def argument(call: cst.Call, name: str, position: int) -> cst.BaseExpression | None:
    """The value passed for parameter `name` (by keyword, or at 0-based `position`)."""
    arg = keyword(call, name)
    if arg is not None:
        return arg.value
    args = positional(call)
    return args[position].value if position < len(args) else None


def is_false(expr: cst.BaseExpression | None) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "False"


def int_value(expr: cst.BaseExpression | None) -> int | None:
    if isinstance(expr, cst.Integer):
        return int(expr.value.replace("_", ""), 0)
    return None


def string_value(expr: cst.BaseExpression | None) -> str | None:
    if isinstance(expr, cst.SimpleString):
        return expr.evaluated_value if isinstance(expr.evaluated_value, str) else None
    return None


def value_method(ctx, node: cst.CSTNode, *names: str) -> bool:
    """`value.<name>(...)` on a value, not a module function such as `torch.log(...)`."""
    return (
        isinstance(node, cst.Call) and method_call(node, *names) and not ctx.is_imported(node.func)
    )


def method_call(node: cst.CSTNode, *names: str) -> bool:
    """`node` is `<something>.<one of names>(...)`."""
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value in names
    )


def receiver(call: cst.CSTNode) -> cst.BaseExpression:
    """`x` of `x.method(...)`: the caller has checked `method_call`."""
    assert isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
    return call.func.value


def terminal_name(expr: cst.BaseExpression) -> str | None:
    """`model` for `model`, `self.model`, `a.b.model`; None otherwise."""
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    return None


def names_in(node: cst.CSTNode) -> set[str]:
    """Every plain name bound by an assignment/loop target such as `(i, (x, y))`."""
    if isinstance(node, cst.Name):
        return {node.value}
    if isinstance(node, (cst.Tuple, cst.List)):
        out: set[str] = set()
        for element in node.elements:
            out |= names_in(element.value)
        return out
    return set()


_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_LOOPS = (cst.For, cst.While)


def walk(
    ctx, node: cst.CSTNode, skip_functions: bool = True, skip_loops: bool = False
) -> Iterator[cst.CSTNode]:
    """All nodes below `node` (pre-order), not entering nested function/class bodies (and,
    with `skip_loops`, not entering nested loops)."""
    children = ctx.children
    stack = list(reversed(children(node)))
    while stack:
        current = stack.pop()
        yield current
        if (skip_functions and isinstance(current, _SCOPES)) or (
            skip_loops and isinstance(current, _LOOPS)
        ):
            continue
        stack.extend(reversed(children(current)))


# --- devices -------------------------------------------------------------------------------
def is_cuda_device(ctx: FileContext, expr: cst.BaseExpression | None, depth: int = 0) -> bool:
    """`expr` evaluates to a CUDA device (at least when CUDA is available)."""
    if expr is None or depth > 3:
        return False
    text = string_value(expr)
    if text is not None:
        return text.startswith("cuda")
    if isinstance(expr, cst.IfExp):
        return is_cuda_device(ctx, expr.body, depth + 1) or is_cuda_device(
            ctx, expr.orelse, depth + 1
        )
    if isinstance(expr, cst.Call) and ctx.call_name(expr) == "torch.device":
        return is_cuda_device(ctx, argument(expr, "type", 0), depth + 1)
    if isinstance(expr, cst.Name):
        values = ctx.assigned_values(expr) or []
        return any(is_cuda_device(ctx, v, depth + 1) for v in values)
    return False


def is_cuda_move(ctx: FileContext, call: cst.Call) -> bool:
    """`x.cuda(...)` or `x.to(<cuda device>, ...)`."""
    if not isinstance(call.func, cst.Attribute):
        return False
    if call.func.attr.value == "cuda":
        return True
    return call.func.attr.value == "to" and is_cuda_device(ctx, argument(call, "device", 0))


def file_moves_to_cuda(ctx: FileContext) -> bool:
    return any(is_cuda_move(ctx, call) for call in ctx.index.calls)


# --- loaders and loops ---------------------------------------------------------------------
def unwrap_iterable(ctx: FileContext, expr: cst.BaseExpression) -> cst.BaseExpression:
    """`enumerate(tqdm(loader))` -> `loader`."""
    while isinstance(expr, cst.Call) and expr.args and not expr.args[0].keyword:
        name = ctx.call_name(expr) or terminal_name(expr.func)
        if name not in _ITER_WRAPPERS and terminal_name(expr.func) not in (
            "enumerate",
            "iter",
            "tqdm",
        ):
            break
        expr = expr.args[0].value
    return expr


def loader_call(ctx: FileContext, expr: cst.BaseExpression) -> cst.Call | None:
    """The `DataLoader(...)` call that `expr` (a loop's iterable) comes from, if visible."""
    source: cst.BaseExpression | None = unwrap_iterable(ctx, expr)
    if isinstance(source, cst.Name):
        source = ctx.single_value(source)
    if isinstance(source, cst.Call) and ctx.call_name(source) == DATALOADER:
        return source
    return None


def batch_names(ctx: FileContext, loop: cst.For) -> set[str]:
    """Names holding a batch in `loop`: its targets and simple unpackings of them."""
    names = names_in(loop.target)
    if isinstance(loop.iter, cst.Call) and terminal_name(loop.iter.func) == "enumerate":
        if isinstance(loop.target, cst.Tuple) and loop.target.elements:
            names -= names_in(loop.target.elements[0].value)  # the step counter
    for stmt in loop.body.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if (
                    isinstance(small, cst.Assign)
                    and isinstance(small.value, cst.Name)
                    and small.value.value in names
                ):
                    for target in small.targets:
                        names |= names_in(target.target)
    return names


def exclusive_branches(ctx: FileContext, a: cst.CSTNode, b: cst.CSTNode) -> bool:
    """`a` and `b` sit in different branches of one `if` (body vs. `else`/`elif`): one run
    never executes both."""
    for branch_if in ctx.ancestors(a):
        if not isinstance(branch_if, cst.If) or branch_if.orelse is None:
            continue
        if not ctx.is_inside(b, branch_if):
            continue
        a_in_body = ctx.is_inside(a, branch_if.body)
        b_in_body = ctx.is_inside(b, branch_if.body)
        if a_in_body != b_in_body:
            return True
    return False


def grad_disabled_around(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` runs under `with torch.no_grad()/inference_mode()/set_grad_enabled(...)` or in a
    function decorated with one of them (or one that calls `torch.set_grad_enabled`)."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.With):
            for item in ancestor.items:
                if grad_context_name(ctx, item.item) in GRAD_OFF_CONTEXTS:
                    return True
        if isinstance(ancestor, cst.FunctionDef):
            for decorator in ancestor.decorators:
                if grad_context_name(ctx, decorator.decorator) in GRAD_OFF_CONTEXTS:
                    return True
            if any(
                isinstance(n, cst.Call) and ctx.call_name(n) == "torch.set_grad_enabled"
                for n in walk(ctx, ancestor.body)
            ):
                return True
    return False


def disables_grad_inside(ctx: FileContext, body: cst.CSTNode) -> bool:
    """`body` opens a `with torch.no_grad()/inference_mode()/...` block somewhere inside."""
    for node in walk(ctx, body):
        if isinstance(node, cst.With):
            for item in node.items:
                if grad_context_name(ctx, item.item) in GRAD_OFF_CONTEXTS:
                    return True
    return False


def only_called_without_grad(ctx: FileContext, function: cst.FunctionDef) -> bool:
    """`function` is called in this file, and always under no_grad/inference_mode."""
    calls = [c for c in ctx.index.calls if terminal_name(c.func) == function.name.value]
    return bool(calls) and all(grad_disabled_around(ctx, c) for c in calls)


def grad_context_name(ctx: FileContext, expr: cst.BaseExpression) -> str | None:
    """The qualified name of a context manager or decorator, called (`torch.no_grad()`) or not."""
    return ctx.qualified_name(expr.func if isinstance(expr, cst.Call) else expr)


# --- models --------------------------------------------------------------------------------
def is_model_like(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    """A name or attribute that holds a model: named like one, or built from an nn.Module."""
    name = terminal_name(expr)
    if name and _DATA_ENCODER_RE.search(name):
        return False
    if name and _MODEL_NAME_RE.search(name) and not _FACTORY_RE.match(name):
        return not (_ACTION_RE.match(name) and _names_a_function(ctx, expr, name))
    value = ctx.single_value(expr)
    if isinstance(value, cst.Call) and not isinstance(
        value.func, cst.Call
    ):  # `nn.MSELoss()(a, b)` is a tensor
        qualified = ctx.call_name(value) or ""
        return qualified.startswith("torch.nn.") and qualified[9:10].isupper()
    return False


def _names_a_function(ctx: FileContext, expr: cst.BaseExpression, name: str) -> bool:
    """`name` is a function or method, not a variable holding a model: a `def` of this file or
    an import, or `self.<name>` that the file never assigns (a method of a base class)."""
    functions = ctx.memo.get("function_names")
    if functions is None:
        functions = ctx.memo["function_names"] = {f.name.value for f in ctx.index.functions}
    assert isinstance(functions, set)
    if isinstance(expr, cst.Name):
        return name in functions or ctx.is_imported(expr)
    if not (isinstance(expr, cst.Attribute) and terminal_name(expr.value) == "self"):
        return False
    return not any(target.attr.value == name for target, _ in ctx.index.attribute_assigns)


def calls_model(ctx: FileContext, body: cst.CSTNode, direct: bool = False) -> bool:
    """`body` calls a model (`model(x)`) or, unless `direct`, passes one positionally to a
    helper (`step(model, batch)`); putting one in a record (`dict(model=m)`, `.append(m)`) is
    neither."""
    for node in walk(ctx, body):
        if not isinstance(node, cst.Call):
            continue
        if is_model_like(ctx, node.func):
            return True
        if direct or terminal_name(node.func) in _RECORD_BUILDERS:
            continue
        passed = [
            a.value for a in positional(node) if isinstance(a.value, (cst.Name, cst.Attribute))
        ]
        if any(is_model_like(ctx, value) for value in passed):
            return True
    return False


def is_plain_function(ctx: FileContext, function: cst.FunctionDef) -> bool:
    """A module-level or nested function, not a method of a class."""
    block = ctx.parent(function)
    return block is None or not isinstance(ctx.parent(block), cst.ClassDef)


def calls_backward(ctx, body: cst.CSTNode) -> bool:
    return any(method_call(n, "backward") for n in walk(ctx, body))


# --- numerics ------------------------------------------------------------------------------
def function_or_method(
    ctx: FileContext, node, function: str, method: str
) -> cst.BaseExpression | None:
    """The operand of `torch.<function>(x, ...)` or `x.<method>(...)`; None when neither."""
    if not isinstance(node, cst.Call):
        return None
    if ctx.call_name(node) == function and node.args and not node.args[0].keyword:
        return node.args[0].value
    if value_method(ctx, node, method) and isinstance(node.func, cst.Attribute):
        return node.func.value
    return None


def exp_operand(ctx: FileContext, node, depth: int = 0) -> cst.BaseExpression | None:
    """`x` for `torch.exp(x)`, `x.exp()`, or a name assigned once from one of them."""
    if isinstance(node, cst.Name) and depth == 0:
        return exp_operand(ctx, ctx.single_value(node), depth + 1)
    return function_or_method(ctx, node, "torch.exp", "exp")


def is_shifted(expr: cst.BaseExpression) -> bool:
    """`x - c`: the usual max subtraction that keeps `exp` from overflowing."""
    return isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Subtract)
