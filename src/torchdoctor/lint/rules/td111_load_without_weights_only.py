"""TD111: `torch.load` that may unpickle arbitrary objects."""

from __future__ import annotations

from torchdoctor.lint.checkpoints import (
    in_safe_globals_block,
    loaded_into_model,
    loaded_into_numpy,
    loads_into_state_dict,
    saved_by_a_sibling_script,
    saves_of_same_file,
    written_by_a_saver_before,
)
from torchdoctor.lint.edits import add_keyword
from torchdoctor.lint.patterns import has_star_args, keyword
from torchdoctor.lint.project import declared_torch_maximum, declared_torch_minimum
from torchdoctor.lint.rule import Rule

# torch 2.6 made `weights_only=True` the default; torch 1.13 added the argument.
_SAFE_DEFAULT_FROM = (2, 6)
_ARGUMENT_FROM = (1, 13)


def _own_file(ctx, call) -> bool:
    """The program reads back a file it writes itself (a `torch.save` of the same path in this
    file), or its own NumPy data, or data (not a model's state: checkpoints are what people
    share) that another script of its folder writes under that name: nobody else's pickle
    runs."""
    return (
        bool(saves_of_same_file(ctx, call))
        or written_by_a_saver_before(ctx, call)
        or loaded_into_numpy(ctx, call)
        or (saved_by_a_sibling_script(ctx, call) and not loaded_into_model(ctx, call))
    )


class LoadWithoutWeightsOnly(Rule):
    """
    ## What it does
    Flags `torch.load(...)` without `weights_only`, unless the project declares torch >= 2.6
    (`pyproject.toml`, `setup.cfg` or `requirements*.txt` next to the file or above it), where
    that is the default, or declares only versions before 1.13, which lack the argument. A load
    inside `with torch.serialization.safe_globals(...)` already expects a weights-only load,
    a file this program writes itself (a `torch.save` of the same path in the file, or a path
    built from a name that the same function handed to a checkpoint saver above the load,
    `early_stopping(val_loss, model, path)` then `torch.load(path + "/best.pth)"`; data that
    is not a model's state under the file name another script of its folder saves, an earlier
    stage of its pipeline) or its own NumPy data runs nobody else's pickle, and an explicit `weights_only=False` is a
    decision: all are left alone.

    ## Why is this bad
    A full unpickle runs arbitrary code stored in the file: loading a checkpoint from anyone
    else can execute their code. Before torch 2.6 the default was `weights_only=False`, so the
    behaviour of a call without the argument depends on the installed version.

    ## Example
    ```python
    model.load_state_dict(torch.load(path, map_location="cpu"))
    ```

    ## Use instead
    ```python
    model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
    ```

    ## Fix safety
    Unsafe, and offered only where the loaded value goes straight into `load_state_dict` (a
    state dict of tensors, which a weights-only load reads). Elsewhere the file may hold a
    whole pickled model, NumPy arrays or other objects that `weights_only=True` refuses, so no
    fix is offered: allow-list their classes with `torch.serialization.add_safe_globals`.
    """

    code = "TD111"
    name = "load-without-weights-only"
    fix_safety = "unsafe"

    def check(self, ctx):
        minimum = declared_torch_minimum(ctx.path)
        maximum = declared_torch_maximum(ctx.path)
        if (minimum and minimum >= _SAFE_DEFAULT_FROM) or (maximum and maximum < _ARGUMENT_FROM):
            return
        for call in ctx.calls_to("torch.load"):
            if has_star_args(call) or keyword(call, "weights_only") is not None:
                continue
            if in_safe_globals_block(ctx, call) or _own_file(ctx, call):
                continue
            fix = None
            if loads_into_state_dict(ctx, call):
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
