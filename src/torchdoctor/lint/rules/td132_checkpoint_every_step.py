"""TD132: a checkpoint written on every training step."""

from __future__ import annotations

from torchdoctor.lint.rule import Rule
from torchdoctor.lint.steps import every_step


class CheckpointEveryStep(Rule):
    """
    ## What it does
    Flags `torch.save(...)` that runs on every training step: in a loop that calls `backward()`
    or `optimizer.step()` (or a function of the file that does), or in a function such a loop
    calls, with no `if` between it and the loop (`if step % save_every == 0:` and "save when the
    validation loss improves" are left alone, and so is a save after the step loop or in a
    `for epoch in ...` loop: once per epoch).

    ## Why is this bad
    Every save serialises the whole state (model, optimizer moments) and writes it to disk, on
    the step's path: copies from the GPU, pickling and file I/O that take far longer than a
    step, so the accelerator waits. A checkpoint every N steps or minutes loses at most that
    much work on a crash.

    ## Example
    ```python
    for step, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        torch.save(model.state_dict(), "checkpoint.pt")
    ```

    ## Use instead
    ```python
    for step, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        if step % 1000 == 0:
            torch.save(model.state_dict(), "checkpoint.pt")
    ```

    ## Fix safety
    No automatic fix: how often to save is the author's trade between lost work and time.
    """

    code = "TD132"
    name = "checkpoint-every-step"

    def check(self, ctx):
        for call in ctx.calls_to("torch.save"):
            if not every_step(ctx, call):
                continue
            yield ctx.violation(
                self,
                call,
                "`torch.save` on every training step writes the whole state on the step's "
                "path; save every N steps",
            )
