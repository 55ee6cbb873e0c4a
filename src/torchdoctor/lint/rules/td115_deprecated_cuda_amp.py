"""TD115: deprecated `torch.cuda.amp.autocast` / `torch.cuda.amp.GradScaler`."""

from __future__ import annotations

import libcst as cst

from torchdoctor.lint.edits import add_keyword
from torchdoctor.lint.project import (
    declared_torch_maximum,
    declared_torch_minimum,
    requires_torch_1,
)
from torchdoctor.lint.rule import Rule

# old positional order of torch.cuda.amp.autocast; the new API takes device_type first
_OLD_AUTOCAST_POSITIONAL = ("enabled", "dtype", "cache_enabled")
DEPRECATED = {"torch.cuda.amp.autocast": "autocast", "torch.cuda.amp.GradScaler": "GradScaler"}
# decorators for custom autograd functions: the new ones take the device as a keyword
DECORATORS = {"torch.cuda.amp.custom_fwd": "custom_fwd", "torch.cuda.amp.custom_bwd": "custom_bwd"}


_DEPRECATED_IN = (2, 4)
_AMP_GRAD_SCALER_FROM = (2, 3)


def _module_name(module) -> str:
    if isinstance(module, cst.Name):
        return module.value
    if isinstance(module, cst.Attribute):
        return f"{_module_name(module.value)}.{module.attr.value}"
    return ""


def _imported_modules(ctx) -> list[str]:
    """Dotted names this file imports (`util.misc`; `from util import misc` gives `util` and
    `util.misc`); relative imports are skipped."""
    modules = []
    for node in ctx.index.imports:
        modules += [_module_name(alias.name) for alias in node.names]
    for node in ctx.index.import_froms:
        if node.relative or node.module is None:
            continue
        base = _module_name(node.module)
        modules.append(base)
        if not isinstance(node.names, cst.ImportStar):
            modules += [f"{base}.{_module_name(alias.name)}" for alias in node.names]
    return [m for m in modules if m and not m.startswith("torch")]


class DeprecatedCudaAmp(Rule):
    """
    ## What it does
    Flags calls of `torch.cuda.amp.autocast(...)` and `torch.cuda.amp.GradScaler(...)`, and
    the decorators `@torch.cuda.amp.custom_fwd` / `@torch.cuda.amp.custom_bwd` of custom
    autograd functions (however they are imported), and `from torch.cuda.amp import ...`.
    Nothing is flagged where the project declares only torch versions before 2.4
    (`pyproject.toml`, `setup.cfg`, `requirements*.txt`), which did not deprecate them, nor
    where the file or a module of its project that it imports imports `torch._six` (removed
    in torch 2.0: the code runs on torch 1.x only).

    ## Why is this bad
    All of them are deprecated since torch 2.4 and emit a `FutureWarning` when used; the
    device-generic `torch.amp.autocast("cuda", ...)`, `torch.amp.GradScaler("cuda", ...)` and
    `torch.amp.custom_fwd(device_type="cuda")` / `torch.amp.custom_bwd(device_type="cuda")`
    are the supported spelling and work the same way for other devices.

    ## Example
    ```python
    scaler = torch.cuda.amp.GradScaler()
    with torch.cuda.amp.autocast(dtype=torch.float16):
        loss = model(x)

    class Square(torch.autograd.Function):
        @staticmethod
        @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
        def forward(ctx, x): ...
    ```

    ## Use instead
    ```python
    scaler = torch.amp.GradScaler("cuda")
    with torch.amp.autocast("cuda", dtype=torch.float16):
        loss = model(x)

    class Square(torch.autograd.Function):
        @staticmethod
        @torch.amp.custom_fwd(device_type="cuda", cast_inputs=torch.float32)
        def forward(ctx, x): ...
    ```

    ## Fix safety
    Safe: the new call is the one the deprecated wrapper forwards to; positional arguments
    of the old `autocast` become keywords because the new signature starts with the device,
    and the decorators get `device_type="cuda"`, which is what the old ones pass on. Needs
    `import torch` in the file (and torch >= 2.4 for `torch.amp.custom_fwd`, the release
    that deprecated the old decorators). No fix for `GradScaler` where the project declares
    support for torch before 2.3, which has no `torch.amp.GradScaler`.
    """

    code = "TD115"
    name = "deprecated-cuda-amp"
    fix_safety = "safe"

    def check(self, ctx):
        maximum = declared_torch_maximum(ctx.path)
        if maximum is not None and maximum < _DEPRECATED_IN:
            return
        if requires_torch_1(ctx.path, ctx.source, _imported_modules(ctx)):
            return  # it imports what torch 2.0 removed: it runs before the deprecation
        for node in ctx.index.import_froms:
            if _module_name(node.module) == "torch.cuda.amp":
                yield ctx.violation(
                    self,
                    node,
                    "`torch.cuda.amp` is deprecated; import `autocast` and `GradScaler` "
                    'from `torch.amp` and pass the device (`"cuda"`)',
                )
        for call in ctx.calls_to(*DEPRECATED):
            kind = DEPRECATED[ctx.call_name(call)]
            yield ctx.violation(
                self,
                call,
                f'`torch.cuda.amp.{kind}` is deprecated; use `torch.amp.{kind}("cuda", ...)`',
                self._fix(ctx, call, kind),
            )
        for decorator in (d.decorator for f in ctx.index.functions for d in f.decorators):
            target = decorator.func if isinstance(decorator, cst.Call) else decorator
            kind = DECORATORS.get(ctx.qualified_name(target) or "")
            if kind is not None:
                fix = self._decorator_fix(ctx, decorator, kind)
                yield ctx.violation(
                    self,
                    decorator,
                    f"`torch.cuda.amp.{kind}` is deprecated; use "
                    f'`torch.amp.{kind}(device_type="cuda")`',
                    fix,
                )

    def _decorator_fix(self, ctx, decorator: cst.BaseExpression, kind: str):
        """`@custom_fwd` -> `@torch.amp.custom_fwd(device_type="cuda")`; arguments are kept."""
        if not ctx.index.torch_aliases:
            return None
        func = cst.parse_expression(f"{ctx.index.torch_aliases[0]}.amp.{kind}")
        call = decorator if isinstance(decorator, cst.Call) else cst.Call(func=func)
        if any(a.star for a in call.args):
            return None
        new = add_keyword(call.with_changes(func=func), "device_type", '"cuda"')
        return ctx.make_fix(
            self.fix_safety, f'Use `torch.amp.{kind}(device_type="cuda")`', {decorator: new}
        )

    def _fix(self, ctx, call: cst.Call, kind: str):
        if not ctx.index.torch_aliases or any(a.star for a in call.args):
            return None
        minimum = declared_torch_minimum(ctx.path)
        if kind == "GradScaler" and minimum is not None and minimum < _AMP_GRAD_SCALER_FROM:
            return None  # the project supports torch without `torch.amp.GradScaler`
        args = list(call.args)
        if kind == "autocast":
            positional = [a for a in args if a.keyword is None]
            if len(positional) > len(_OLD_AUTOCAST_POSITIONAL):
                return None
            for arg, name in zip(positional, _OLD_AUTOCAST_POSITIONAL):
                args[args.index(arg)] = arg.with_changes(
                    keyword=cst.Name(name),
                    equal=cst.AssignEqual(
                        whitespace_before=cst.SimpleWhitespace(""),
                        whitespace_after=cst.SimpleWhitespace(""),
                    ),
                )
        device = cst.Arg(cst.SimpleString('"cuda"'))
        if args:
            device = device.with_changes(
                comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
            )
        func = cst.parse_expression(f"{ctx.index.torch_aliases[0]}.amp.{kind}")
        new = call.with_changes(func=func, args=[device, *args])
        return ctx.make_fix(self.fix_safety, f'Use `torch.amp.{kind}("cuda", ...)`', {call: new})
