"""TD129: a new DataLoader iterator for every training step (`next(iter(loader))`)."""

from __future__ import annotations

import re

import libcst as cst

from torchdoctor.lint.patterns import DATALOADER, terminal_name
from torchdoctor.lint.rule import Rule
from torchdoctor.lint.steps import step_loop_around

_LOADER_NAME_RE = re.compile(r"loader", re.IGNORECASE)


class NewIteratorPerStep(Rule):
    """
    ## What it does
    Flags `next(iter(loader))` (or `next(itertools.islice(loader, 1))`) that a generator
    yields in a loop (one new iterator per item it hands out), or that runs once per
    training step: in a loop that calls
    `backward()` or `optimizer.step()` (or a function of the file that does), or in a function
    such a loop calls (`batch = sample_batch(loader)`). The iterated value must be a
    `DataLoader`: built by `DataLoader(...)` in the file, or a name or attribute named as a loader
    (`train_loader`, `self.loader`, `loaders[level]`). A `next(iter(loader))` outside the
    training steps (one batch to build the model, a sample to plot per epoch) is left alone.

    ## Why is this bad
    Every `iter(loader)` starts a new pass: with `num_workers > 0` it starts the worker
    processes again, each prefetching batches of which one is used; with `shuffle=True` it draws
    a whole new permutation of the dataset for one batch. The step waits for that start-up every
    time, and an "epoch" no longer visits every sample once.

    ## Example
    ```python
    for step in range(num_steps):
        x, y = next(iter(train_loader))
        loss = criterion(model(x), y)
        loss.backward()
    ```

    ## Use instead
    ```python
    def forever(loader):
        while True:  # one iterator per pass over the data
            yield from loader

    batches = forever(train_loader)
    for step in range(num_steps):
        x, y = next(batches)
        loss = criterion(model(x), y)
        loss.backward()
    ```

    ## Fix safety
    No automatic fix: keeping one iterator changes which samples each step sees (every sample
    once per pass instead of a fresh draw per step).
    """

    code = "TD129"
    name = "new-iterator-per-step"

    def check(self, ctx):
        for call in ctx.calls_to("builtins.next"):
            iterated = _iter_argument(ctx, call)
            if iterated is None or not _is_loader(ctx, iterated):
                continue
            if step_loop_around(ctx, call) is None and not _yielded_per_item(ctx, call):
                continue
            yield ctx.violation(
                self,
                call,
                "`next(iter(loader))` on every step starts a new pass over the loader (its "
                "workers, its shuffle) for one batch; keep one iterator and call `next` on it",
            )


def _yielded_per_item(ctx, call: cst.Call) -> bool:
    """`while True: yield next(iter(loader))`: a generator whose every item starts a new
    iterator (whoever consumes it, one batch at a time)."""
    statement = ctx.parent(call)
    loop = ctx.enclosing(call, (cst.For, cst.While))
    function = ctx.enclosing(call, cst.FunctionDef)
    return (
        isinstance(statement, cst.Yield)
        and loop is not None
        and function is not None
        and ctx.is_inside(loop, function)
    )


def _iter_argument(ctx, call: cst.Call) -> cst.BaseExpression | None:
    """`loader` of `next(iter(loader))` or `next(itertools.islice(loader, 1))` (islice calls
    `iter(loader)` too)."""
    if len(call.args) != 1 or call.args[0].keyword is not None:
        return None
    inner = call.args[0].value
    if not (isinstance(inner, cst.Call) and inner.args and inner.args[0].keyword is None):
        return None
    name = ctx.call_name(inner)
    if (name == "builtins.iter" and len(inner.args) == 1) or name == "itertools.islice":
        return inner.args[0].value
    return None


def _is_loader(ctx, expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Call):
        return ctx.call_name(expr) == DATALOADER
    if isinstance(expr, cst.Subscript):  # `loaders[level]`
        expr = expr.value
    value = ctx.single_value(expr) if isinstance(expr, cst.Name) else None
    if isinstance(value, cst.Call) and ctx.call_name(value) == DATALOADER:
        return True
    return bool(_LOADER_NAME_RE.search(terminal_name(expr) or ""))
