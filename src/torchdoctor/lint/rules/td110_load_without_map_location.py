"""TD110: `torch.load` without `map_location`."""

from __future__ import annotations

from torchdoctor.lint.patterns import argument, has_star_args
from torchdoctor.lint.rule import Rule


class LoadWithoutMapLocation(Rule):
    """
    ## What it does
    Flags `torch.load(...)` calls that do not pass `map_location`.

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
            if not has_star_args(call) and argument(call, "map_location", 1) is None:
                yield ctx.violation(
                    self,
                    call,
                    "`torch.load` without `map_location` restores tensors "
                    "onto the device they were saved from",
                )
