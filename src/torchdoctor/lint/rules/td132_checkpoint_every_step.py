"""TD132: a checkpoint written on every training step."""

from __future__ import annotations

import re

import libcst as cst

from torchdoctor.lint.patterns import terminal_name
from torchdoctor.lint.rule import Rule
from torchdoctor.lint.steps import LOOPS, every_step, is_epoch_loop, step_loop_around

# a training loss (`loss`, `smooth_loss`, `self.train_loss`), not a held-out one (`val_loss`)
_TRAINING_LOSS_RE = re.compile(r"loss", re.IGNORECASE)
_HELD_OUT_RE = re.compile(r"val|test|eval|dev|holdout", re.IGNORECASE)
_BEST_RE = re.compile(r"best|min|lowest|low", re.IGNORECASE)


def _training_loss_improves(ctx, test: cst.BaseExpression) -> bool:
    """`loss < best`, `self.best_loss > loss`: the training loss compared with its best so far.
    The training loss falls nearly every step, so nearly every step is a new best."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return False
    target = test.comparisons[0]
    if not isinstance(target.operator, (cst.LessThan, cst.GreaterThan, cst.LessThanEqual)):
        return False
    names = [terminal_name(test.left) or "", terminal_name(target.comparator) or ""]
    if isinstance(target.operator, cst.GreaterThan):
        names.reverse()  # `best > loss`
    current, best = names
    return (
        bool(_TRAINING_LOSS_RE.search(current))
        and not _HELD_OUT_RE.search(current)
        and not _BEST_RE.search(current)
        and bool(_BEST_RE.search(best))
        and not _HELD_OUT_RE.search(best)
    )


def _saved_on_each_new_best_training_loss(ctx, call: cst.Call) -> bool:
    """`call` runs in a step loop (or a function one calls every step) under one `if` only,
    and that `if` asks whether the training loss is the best so far."""
    loop = step_loop_around(ctx, call)
    if loop is None or is_epoch_loop(loop):
        return False
    guards = []
    for ancestor in ctx.ancestors(call):
        if ancestor is loop or isinstance(ancestor, (cst.FunctionDef, *LOOPS)):
            break
        if isinstance(ancestor, (cst.If, cst.IfExp)):
            guards.append(ancestor)
    return len(guards) == 1 and _training_loss_improves(ctx, guards[0].test)


class CheckpointEveryStep(Rule):
    """
    ## What it does
    Flags `torch.save(...)` that runs on every training step: in a loop that calls `backward()`
    or `optimizer.step()` (or a function of the file that does), or in a function such a loop
    calls, with no `if` between it and the loop (`if step % save_every == 0:` and "save when the
    validation loss improves" are left alone, and so is a save after the step loop or in a
    `for epoch in ...` loop: once per epoch), or with only "the training loss is the best so
    far" between them (`if loss < best_loss:`: the training loss falls nearly every step).

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
            if every_step(ctx, call):
                when = "on every training step"
            elif _saved_on_each_new_best_training_loss(ctx, call):
                when = "on every new best training loss (nearly every step while it falls)"
            else:
                continue
            yield ctx.violation(
                self,
                call,
                f"`torch.save` {when} writes the whole state on the step's path; save every N "
                "steps (or on the validation loss)",
            )
