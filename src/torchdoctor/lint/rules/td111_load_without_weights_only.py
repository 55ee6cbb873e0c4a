"""TD111: `torch.load` that may unpickle arbitrary objects."""

from __future__ import annotations

from torchdoctor.lint.edits import add_keyword
from torchdoctor.lint.patterns import has_star_args, is_false, keyword
from torchdoctor.lint.rule import Rule


class LoadWithoutWeightsOnly(Rule):
    """
    ## What it does
    Flags `torch.load(...)` with `weights_only=False` or without `weights_only`.

    ## Why is this bad
    A full unpickle runs arbitrary code stored in the file: loading a checkpoint from anyone
    else can execute their code. Before torch 2.6 the default was `weights_only=False`, so the
    behaviour of a call without the argument depends on the installed version.

    ## Example
    ```python
    state = torch.load(path, map_location="cpu")
    ```

    ## Use instead
    ```python
    state = torch.load(path, map_location="cpu", weights_only=True)
    ```

    ## Fix safety
    Unsafe: the fix adds `weights_only=True` where the argument is missing; checkpoints that
    pickle custom classes then fail to load until those classes are allow-listed
    (`torch.serialization.add_safe_globals`). An explicit `weights_only=False` is left alone.
    """

    code = "TD111"
    name = "load-without-weights-only"
    fix_safety = "unsafe"

    def check(self, ctx):
        for call in ctx.calls_to("torch.load"):
            if has_star_args(call):
                continue
            weights_only = keyword(call, "weights_only")
            if weights_only is None:
                fix = ctx.make_fix(
                    self.fix_safety,
                    "Add `weights_only=True`",
                    {call: add_keyword(call, "weights_only", "True")},
                )
                yield ctx.violation(
                    self,
                    call,
                    "`torch.load` without `weights_only=True` may "
                    "unpickle arbitrary code (the default changed in torch 2.6)",
                    fix,
                )
            elif is_false(weights_only.value):
                yield ctx.violation(
                    self,
                    weights_only,
                    "`weights_only=False` lets the checkpoint run arbitrary code when loaded",
                )
