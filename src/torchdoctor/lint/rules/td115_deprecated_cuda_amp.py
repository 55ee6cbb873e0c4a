"""TD115: deprecated `torch.cuda.amp.autocast` / `torch.cuda.amp.GradScaler`."""

from __future__ import annotations

import libcst as cst

from torchdoctor.lint.rule import Rule

# old positional order of torch.cuda.amp.autocast; the new API takes device_type first
_OLD_AUTOCAST_POSITIONAL = ("enabled", "dtype", "cache_enabled")
DEPRECATED = {"torch.cuda.amp.autocast": "autocast", "torch.cuda.amp.GradScaler": "GradScaler"}


class DeprecatedCudaAmp(Rule):
    """
    ## What it does
    Flags calls of `torch.cuda.amp.autocast(...)` and `torch.cuda.amp.GradScaler(...)`
    (however they are imported).

    ## Why is this bad
    Both are deprecated since torch 2.4 and emit a `FutureWarning` on every call; the
    device-generic `torch.amp.autocast("cuda", ...)` and `torch.amp.GradScaler("cuda", ...)`
    are the supported spelling and work the same way for other devices.

    ## Example
    ```python
    scaler = torch.cuda.amp.GradScaler()
    with torch.cuda.amp.autocast(dtype=torch.float16):
        loss = model(x)
    ```

    ## Use instead
    ```python
    scaler = torch.amp.GradScaler("cuda")
    with torch.amp.autocast("cuda", dtype=torch.float16):
        loss = model(x)
    ```

    ## Fix safety
    Safe: the new call is the one the deprecated wrapper forwards to; positional arguments
    of the old `autocast` become keywords because the new signature starts with the device.
    Needs `import torch` in the file.
    """

    code = "TD115"
    name = "deprecated-cuda-amp"
    fix_safety = "safe"

    def check(self, ctx):
        for call in ctx.calls_to(*DEPRECATED):
            kind = DEPRECATED[ctx.call_name(call)]
            yield ctx.violation(self, call, f"`torch.cuda.amp.{kind}` is deprecated; use "
                                f"`torch.amp.{kind}(\"cuda\", ...)`", self._fix(ctx, call, kind))

    def _fix(self, ctx, call: cst.Call, kind: str):
        if not ctx.index.torch_aliases or any(a.star for a in call.args):
            return None
        args = list(call.args)
        if kind == "autocast":
            positional = [a for a in args if a.keyword is None]
            if len(positional) > len(_OLD_AUTOCAST_POSITIONAL):
                return None
            for arg, name in zip(positional, _OLD_AUTOCAST_POSITIONAL):
                args[args.index(arg)] = arg.with_changes(keyword=cst.Name(name), equal=cst.AssignEqual(
                    whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))
        device = cst.Arg(cst.SimpleString('"cuda"'))
        if args:
            device = device.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        func = cst.parse_expression(f"{ctx.index.torch_aliases[0]}.amp.{kind}")
        new = call.with_changes(func=func, args=[device, *args])
        return ctx.make_fix(self.fix_safety, f"Use `torch.amp.{kind}(\"cuda\", ...)`", {call: new})
