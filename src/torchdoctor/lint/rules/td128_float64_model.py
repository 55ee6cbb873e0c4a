"""TD128: a model trained or run in float64."""

from __future__ import annotations

import re

import libcst as cst

from torchdoctor.lint.patterns import argument, is_model_like, method_call, string_value
from torchdoctor.lint.rule import Rule
from torchdoctor.lint.switches import defaults, literal_default, setting_name, truth

_FLOAT64 = {"torch.float64", "torch.double"}
_FLOAT64_STRINGS = {"float64", "double", "torch.float64", "torch.double"}
_OTHER_DTYPES = {"float32", "float", "float16", "half", "bfloat16"}
_DOUBLE_TENSORS = {"torch.DoubleTensor", "torch.cuda.DoubleTensor"}
# names that hold a model in the code this rule is about, beyond patterns.is_model_like's
_HOLDER_RE = re.compile(
    r"(module|agent|policy|actor|critic|teacher|student|generator|discriminator)$", re.I
)
_MAX_DEPTH = 4
# libraries whose numerics usually need float64 (ODE/SDE solvers with tight tolerances,
# Gaussian processes): a file that uses them chose float64 on purpose
_FLOAT64_LIBRARIES = re.compile(
    r"^\s*(?:from|import)\s+(torchdiffeq|torchsde|gpytorch|botorch|scipy\.integrate)\b", re.M
)


class Float64Model(Rule):
    """
    ## What it does
    Flags, in a file that trains (it calls `backward()`) and does not use a library whose
    numerics usually need float64 (`torchdiffeq`, `torchsde`, `gpytorch`, `botorch`,
    `scipy.integrate`), a model put in float64:
    `torch.set_default_dtype(torch.float64)`, `torch.set_default_tensor_type(torch.DoubleTensor)`,
    `model.double()`, `model.to(torch.float64)` / `model.to(dtype=...)`. The dtype may come
    through a name, a conditional, a dict of dtypes or `getattr(torch, args.dtype)`: it counts
    when, with the defaults the file gives its settings (`add_argument("--dtype",
    default="float64")`, `{"dtype": "float64"}`, `double: bool = True`), it is float64. A
    switch the file leaves undecided is not flagged.

    ## Why is this bad
    float64 arithmetic is 2x slower than float32 on CPUs and 30-60x slower on most GPUs, and
    it doubles the memory of weights, gradients, optimizer state and activations. Training
    rarely needs it: a `.double()` is often added only to match NumPy's float64 arrays, where
    casting the data to float32 is the fix.

    ## Example
    ```python
    features = torch.from_numpy(np.load("x.npy"))  # float64, NumPy's default
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 1)).double()
    ```

    ## Use instead
    ```python
    features = torch.from_numpy(np.load("x.npy")).float()
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 1))
    ```

    ## Fix safety
    No automatic fix: the data must be cast too, and some scientific code needs float64's
    precision on purpose.
    """

    code = "TD128"
    name = "float64-model"

    def check(self, ctx):
        if not any(method_call(c, "backward") for c in ctx.index.calls):
            return
        if _FLOAT64_LIBRARIES.search(ctx.source):
            return
        for call in ctx.index.calls:
            if _puts_model_in_float64(ctx, call):
                yield ctx.violation(
                    self,
                    call,
                    "the model runs in float64 (2x slower on CPUs, 30x+ on GPUs, twice the "
                    "memory); keep it and its inputs in float32 unless the numerics need float64",
                )


def _puts_model_in_float64(ctx, call: cst.Call) -> bool:
    name = ctx.call_name(call)
    if name == "torch.set_default_dtype":
        return _is_float64(ctx, argument(call, "d", 0))
    if name == "torch.set_default_tensor_type":
        kind = argument(call, "t", 0)
        return kind is not None and (
            ctx.qualified_name(kind) in _DOUBLE_TENSORS or string_value(kind) in _DOUBLE_TENSORS
        )
    if not isinstance(call.func, cst.Attribute):
        return False
    method = call.func.attr.value
    if method not in ("double", "to", "type") or not _holds_model(ctx, call.func.value):
        return False
    if method == "double":
        return not call.args
    return _is_float64(ctx, argument(call, "dtype", 0))


def _holds_model(ctx, expr: cst.BaseExpression) -> bool:
    """A model name or an expression that builds one (`nn.Sequential(...)`, `Net()` of a
    class in the file)."""
    if isinstance(expr, cst.Call):
        built = ctx.call_name(expr) or ""
        if built.startswith("torch.nn.") and built[9:10].isupper():
            return True
        local = {c.name.value: c for c in ctx.index.classes}
        callee = expr.func.value if isinstance(expr.func, cst.Name) else None
        return callee in local and any(
            "Module" in ctx.code(base.value) or "Lightning" in ctx.code(base.value)
            for base in local[callee].bases
        )
    if isinstance(expr, (cst.Name, cst.Attribute)):
        holder = expr.value if isinstance(expr, cst.Name) else expr.attr.value
        if is_model_like(ctx, expr) or _HOLDER_RE.search(holder):
            return True
        values = ctx.index.bindings.get(holder, []) if isinstance(expr, cst.Name) else []
        return any(isinstance(v, cst.Call) and _holds_model(ctx, v) for v in values)
    return False


def _is_float64(ctx, expr: cst.BaseExpression | None) -> bool:
    return expr is not None and _dtype(ctx, expr, 0) == "float64"


def _dtype(ctx, expr: cst.BaseExpression, depth: int, by_name: bool = False) -> str | None:
    """ "float64", "other" (another dtype), or None (the file does not say) for a dtype
    expression, or with `by_name` for the string naming one (`getattr(torch, name)`)."""
    if depth > _MAX_DEPTH:
        return None
    if by_name and string_value(expr) is not None:
        return "float64" if string_value(expr) in _FLOAT64_STRINGS else "other"
    qualified = ctx.qualified_name(expr) or ""
    if qualified in _FLOAT64:
        return "float64"
    if qualified.startswith("torch.") and qualified[6:] in _OTHER_DTYPES:
        return "other"
    if isinstance(expr, cst.IfExp):
        taken = truth(ctx, expr.test)
        if taken is None:
            return None
        return _dtype(ctx, expr.body if taken else expr.orelse, depth + 1, by_name)
    table = expr.value if isinstance(expr, cst.Subscript) else None
    if isinstance(table, cst.Name):  # `PRECISIONS[cfg["precision"]]`, a lookup table
        table = ctx.single_value(table)
    if isinstance(expr, cst.Subscript) and isinstance(table, cst.Dict):
        index = expr.slice[0].slice if len(expr.slice) == 1 else None
        key = literal_default(ctx, index.value) if isinstance(index, cst.Index) else None
        for element in table.elements:
            if isinstance(element, cst.DictElement) and string_value(element.key) == key:
                return _dtype(ctx, element.value, depth + 1, by_name)
        return None
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name):
        args = [a.value for a in expr.args]
        if expr.func.value == "getattr" and len(args) == 2:
            if ctx.qualified_name(args[0]) == "torch":
                return _dtype(ctx, args[1], depth + 1, by_name=True)
        return None
    setting = setting_name(expr)
    if setting is None:
        return None
    found = {_dtype(ctx, value, depth + 1, by_name) for value in defaults(ctx, setting)}
    found.discard(None)
    return found.pop() if len(found) == 1 else None
