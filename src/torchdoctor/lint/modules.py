"""Which layers a module expression is known to build, from the code of this one file.

`Net().to(rank)` is searched through the body of `class Net` (its methods, its bases and the
classes and functions it calls, when they are defined in the same file), `nn.Sequential(
nn.Conv2d(...), ...)` through its arguments, `model` through what `model` was assigned,
`build()` through what the local function `build` returns. Anything else (a parameter, an
imported factory, `self.model`, `cls.init(...)`) is unknown, and unknown answers "no": a rule
asking "does this model have BatchNorm?" stays silent rather than guess from the rest of the file.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from torchdoctor.lint.patterns import walk

# methods that return the module they are called on
_SAME_MODULE_METHODS = {
    "to",
    "cuda",
    "cpu",
    "half",
    "float",
    "double",
    "bfloat16",
    "train",
    "eval",
    "requires_grad_",
    "to_empty",
    "share_memory",
    "apply",
}
# calls that wrap their first argument and behave like it
_WRAPPERS = {
    "torch.compile",
    "torch.nn.parallel.DistributedDataParallel",
    "torch.nn.DataParallel",
    "torch.nn.SyncBatchNorm.convert_sync_batchnorm",
}
_MAX_DEPTH = 12


def is_nn_class(name: str) -> bool:
    """`torch.nn.Sequential`, `torch.nn.Conv2d`: a module class from `torch.nn` itself."""
    return name.startswith("torch.nn.") and name[9:10].isupper()


class LayerFinder:
    """Finds, for a module expression, the first layer construction that `matches` accepts
    (a predicate on the import-resolved name, e.g. "torch.nn.BatchNorm2d")."""

    def __init__(self, ctx, matches: Callable[[str], bool]):
        self.ctx = ctx
        self.matches = matches
        self._local: dict[str, list[cst.CSTNode]] = {}
        for definition in [*ctx.index.classes, *ctx.index.functions]:
            self._local.setdefault(definition.name.value, []).append(definition)
        self._seen: set[int] = set()

    def find(self, expr: cst.BaseExpression | None) -> cst.Call | None:
        self._seen = set()
        return self._expression(expr, 0)

    # --- expressions -------------------------------------------------------------------------
    def _expression(self, expr, depth: int) -> cst.Call | None:
        if expr is None or depth > _MAX_DEPTH or not self._first_visit(expr):
            return None
        if isinstance(expr, cst.Name):
            for value in self.ctx.assigned_values(expr) or ():
                found = self._expression(value, depth + 1)
                if found is not None:
                    return found
            return None
        if not isinstance(expr, cst.Call) or isinstance(expr.func, cst.Call):
            return None  # calling a module instance (`nn.ReLU()(x)`) gives a tensor
        name = self.ctx.call_name(expr) or ""
        if self.matches(name):
            return expr
        if is_nn_class(name):  # containers: nn.Sequential(...), nn.ModuleList([...])
            return self._calls_below(expr, depth)
        if name in _WRAPPERS:
            return self._expression(expr.args[0].value, depth + 1) if expr.args else None
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _SAME_MODULE_METHODS:
            if not self.ctx.is_imported(expr.func):
                return self._expression(expr.func.value, depth + 1)
        if isinstance(expr.func, cst.Name):
            return self._definition(expr.func.value, depth + 1)
        return None

    def _calls_below(
        self, node: cst.CSTNode, depth: int, skip_functions: bool = True
    ) -> cst.Call | None:
        for child in walk(self.ctx, node, skip_functions=skip_functions):
            if isinstance(child, cst.Call):
                name = self.ctx.call_name(child) or ""
                if self.matches(name):
                    return child
                if isinstance(child.func, cst.Name) and not is_nn_class(name):
                    found = self._definition(child.func.value, depth + 1)
                    if found is not None:
                        return found
        return None

    # --- classes and functions defined in this file ------------------------------------------
    def _definition(self, name: str, depth: int) -> cst.Call | None:
        definitions = self._local.get(name, [])
        if len(definitions) != 1 or depth > _MAX_DEPTH or not self._first_visit(definitions[0]):
            return None  # unknown, or defined more than once (which one runs is not static)
        definition = definitions[0]
        if isinstance(definition, cst.ClassDef):
            for base in definition.bases:
                if isinstance(base.value, cst.Name):
                    found = self._definition(base.value.value, depth + 1)
                    if found is not None:
                        return found
            return self._calls_below(definition.body, depth, skip_functions=False)
        if not isinstance(definition, cst.FunctionDef):
            return None
        for node in walk(self.ctx, definition.body):
            if isinstance(node, cst.Return) and node.value is not None:
                found = self._expression(node.value, depth + 1)
                if found is not None:
                    return found
        return None

    def _first_visit(self, node: cst.CSTNode) -> bool:
        if id(node) in self._seen:
            return False
        self._seen.add(id(node))
        return True


def built_class(ctx, expr: cst.BaseExpression | None, depth: int = 0) -> str | None:
    """The name of the class `expr` is an instance of, when the code shows it: `Net()`,
    `Net().to(device)`, `torch.compile(Net())`, a name assigned once from one of those."""
    if expr is None or depth > _MAX_DEPTH:
        return None
    if isinstance(expr, cst.Name):
        return built_class(ctx, ctx.single_value(expr), depth + 1)
    if not isinstance(expr, cst.Call):
        return None
    if (ctx.call_name(expr) or "") in _WRAPPERS:
        return built_class(ctx, expr.args[0].value, depth + 1) if expr.args else None
    if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _SAME_MODULE_METHODS:
        return None if ctx.is_imported(expr.func) else built_class(ctx, expr.func.value, depth + 1)
    return expr.func.value if isinstance(expr.func, cst.Name) else None
