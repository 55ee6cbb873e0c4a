"""TD110: `torch.load` without `map_location`."""

from __future__ import annotations

from torchdoctor.lint.checkpoints import (
    loaded_into_model,
    loaded_into_numpy,
    offloads_state_to_cpu,
    saved_earlier_in_scope,
    saved_from_cpu,
    saves_of_same_file,
    sibling_branch_sets,
)
from torchdoctor.lint.patterns import argument, has_star_args
from torchdoctor.lint.rule import Rule


class LoadWithoutMapLocation(Rule):
    """
    ## What it does
    Flags `torch.load(...)` calls that do not pass `map_location` and whose result feeds a
    model or optimizer (into `load_state_dict`, directly or by key, or used as a module): that
    is where tensors saved from a GPU come from. Loads of other data are left alone (the code
    does not show their device), and so is a file this
    program saves itself from CPU (`.cpu()` before `torch.save`, CPU-offloaded state dicts) or
    saves earlier in the same function (a reload in the same process, on the same devices);
    files whose content goes to `torch.from_numpy` or NumPy (NumPy data holds no device); and
    the branch of an `if` that leaves `map_location` out while another branch sets it (a
    deliberate choice, usually "load onto the saved GPU").

    ## Why is this bad
    Without it tensors are restored onto the device they were saved from: a checkpoint saved
    on `cuda:0` fails on a CPU-only machine, and in multi-GPU jobs every rank loads its copy
    onto GPU 0, wasting its memory (or running out of it).

    ## Example
    ```python
    checkpoint = torch.load(path)
    ```

    ## Use instead
    ```python
    checkpoint = torch.load(path, map_location=device, weights_only=True)
    ```

    ## Fix safety
    No automatic fix: only the author knows which device the tensors belong on.
    """

    code = "TD110"
    name = "load-without-map-location"

    def check(self, ctx):
        for call in ctx.calls_to("torch.load"):
            if has_star_args(call) or argument(call, "map_location", 1) is not None:
                continue
            if not loaded_into_model(ctx, call) or _device_is_known(ctx, call):
                continue
            yield ctx.violation(
                self,
                call,
                "`torch.load` without `map_location` restores tensors "
                "onto the device they were saved from",
            )


def _device_is_known(ctx, call) -> bool:
    if offloads_state_to_cpu(ctx):
        return True
    saves = saves_of_same_file(ctx, call)
    if any(saved_from_cpu(ctx, save) or saved_earlier_in_scope(ctx, save, call) for save in saves):
        return True
    return loaded_into_numpy(ctx, call) or sibling_branch_sets(ctx, call, "map_location", 1)
