"""TD105: `torch.no_grad()` around pure inference."""

from __future__ import annotations

import re

import libcst as cst

from torchdoctor.lint.edits import rename_attribute
from torchdoctor.lint.patterns import calls_model, method_call, names_in, terminal_name, walk
from torchdoctor.lint.rule import Rule

_INFERENCE_FUNCTION_RE = re.compile(
    r"^(predict|evaluate|validate|infer|inference|generate|sample)(_|$)"
)
_AUTOGRAD_WORDS = {
    "backward",
    "requires_grad",
    "requires_grad_",
    "grad",
    "data",
    "Parameter",
    "autograd",
    "step",
    "train",
    "register_buffer",
    "retain_grad",
}
_HOST_SINKS = {"item", "tolist", "numpy"}
_HOST_CHAIN = {"cpu", "detach", "numpy", "item", "tolist", "float", "double", "long", "int"}
_HOST_FUNCS = {"float", "int", "print", "len", "str", "bool", "round"}


def _mutates_or_autograd(ctx, body: cst.CSTNode) -> bool:
    """In-place ops, writes into objects, or anything autograd-related inside `body`."""
    for node in walk(ctx, body):
        if isinstance(node, cst.Attribute) and node.attr.value in _AUTOGRAD_WORDS:
            return True
        if isinstance(node, cst.Name) and node.value in ("Parameter", "autograd"):
            return True
        if isinstance(node, cst.Call):
            name = terminal_name(node.func) or ""
            if name.endswith("_") and not name.startswith("_"):
                return True
        if isinstance(node, (cst.AssignTarget, cst.AugAssign)):
            target = node.target
            if isinstance(target, (cst.Attribute, cst.Subscript)):
                return True
    return False


def _is_host_value(expr: cst.BaseExpression) -> bool:
    """Values that are plain Python numbers/lists, not tensors (`x.item()`, `float(x)`)."""
    if method_call(expr, *_HOST_SINKS):
        return True
    return isinstance(expr, cst.Call) and terminal_name(expr.func) in _HOST_FUNCS


class NoGradForInference(Rule):
    """
    ## What it does
    Flags `with torch.no_grad():` blocks and `@torch.no_grad()` inference functions (named
    `predict`, `evaluate`, `validate`, `infer`...) that only run a model forward, write
    nothing in place, and whose tensors are not used after the block.

    ## Why is this bad
    `torch.inference_mode()` disables autograd like `no_grad` and also skips version counting
    and view tracking, so pure inference runs faster with less overhead. The gain is a few
    microseconds per operation, negligible next to most models' compute: the rule is at
    `info` level and off by default (`--select TD105` turns it on).

    ## Example
    ```python
    with torch.no_grad():
        logits = model(images)
        correct += (logits.argmax(1) == labels).sum().item()
    ```

    ## Use instead
    ```python
    with torch.inference_mode():
        logits = model(images)
        correct += (logits.argmax(1) == labels).sum().item()
    ```

    ## Fix safety
    Unsafe: tensors created under `inference_mode` can never be used in autograd or modified
    in place later, so the fix breaks code that does either elsewhere; the rule stays quiet
    when it can see such a use, but cannot see other modules.
    """

    code = "TD105"
    name = "no-grad-for-inference"
    fix_safety = "unsafe"
    # Right but rarely worth a change: inference_mode saves version-counter bookkeeping, a few
    # microseconds per op; off unless selected by code.
    level = "info"
    default_enabled = False

    def check(self, ctx):
        for with_node in ctx.index.withs:
            for item in with_node.items:
                if self._is_no_grad(ctx, item.item) and self._pure_block(ctx, with_node):
                    yield self._report(ctx, item.item)
        for function in ctx.index.functions:
            if not _INFERENCE_FUNCTION_RE.match(function.name.value):
                continue
            for decorator in function.decorators:
                if self._is_no_grad(ctx, decorator.decorator) and self._pure_body(
                    ctx, function.body
                ):
                    yield self._report(ctx, decorator.decorator)

    @staticmethod
    def _is_no_grad(ctx, expr) -> bool:
        target = expr.func if isinstance(expr, cst.Call) else expr
        return ctx.qualified_name(target) == "torch.no_grad"

    @staticmethod
    def _pure_body(ctx, body) -> bool:
        return calls_model(ctx, body) and not _mutates_or_autograd(ctx, body)

    def _pure_block(self, ctx, with_node: cst.With) -> bool:
        if not self._pure_body(ctx, with_node.body):
            return False
        end_line = ctx.position(with_node).end.line
        scope = ctx.scope(with_node.body.body[0]) if with_node.body.body else None
        for name in self._tensor_names_bound(ctx, with_node):
            for access in ctx.accesses(name, scope):
                if ctx.line(access.node) > end_line and not self._host_use(ctx, access.node):
                    return False
        return True

    @staticmethod
    def _tensor_names_bound(ctx, with_node: cst.With) -> set[str]:
        names: set[str] = set()
        for node in walk(ctx, with_node.body):
            if isinstance(node, cst.Assign) and not _is_host_value(node.value):
                for target in node.targets:
                    names |= names_in(target.target)
            elif isinstance(node, cst.AugAssign) and not _is_host_value(node.value):
                names |= names_in(node.target)
            elif isinstance(node, (cst.For, cst.AsName)):
                names |= names_in(node.target if isinstance(node, cst.For) else node.name)
        return names

    @staticmethod
    def _host_use(ctx, node: cst.CSTNode) -> bool:
        """`node` is only read into a host value: `x.item()`, `x.cpu().numpy()`, `float(x)`."""
        parent = ctx.parent(node)
        last_attr = None
        while isinstance(parent, (cst.Attribute, cst.Call)):
            if isinstance(parent, cst.Attribute):
                if parent.attr.value not in _HOST_CHAIN:
                    break
                last_attr = parent.attr.value
            node, parent = parent, ctx.parent(parent)
        if last_attr in _HOST_SINKS:
            return True
        if isinstance(parent, cst.Arg):
            call = ctx.parent(parent)
            return isinstance(call, cst.Call) and terminal_name(call.func) in _HOST_FUNCS
        return False

    def _report(self, ctx, expr):
        fix = None
        call = expr if isinstance(expr, cst.Call) else None
        func = call.func if call is not None else expr
        if isinstance(func, cst.Attribute):
            new_func = rename_attribute(func, "inference_mode")
            new = call.with_changes(func=new_func) if call is not None else cst.Call(func=new_func)
            fix = ctx.make_fix(self.fix_safety, "Use `torch.inference_mode()`", {expr: new})
        return ctx.violation(
            self,
            expr,
            "`torch.no_grad()` around pure inference; `torch.inference_mode()` is faster",
            fix,
        )
