"""TD130: the whole model copied on every training step."""

from __future__ import annotations

import libcst as cst

from torchdoctor.lint.modules import LayerFinder, is_nn_class
from torchdoctor.lint.patterns import argument, is_model_like, method_call, receiver, walk
from torchdoctor.lint.rule import Rule
from torchdoctor.lint.steps import every_step


class ModelCopyPerStep(Rule):
    """
    ## What it does
    Flags a copy of a whole model made on every training step: `copy.deepcopy(model)`,
    `copy.deepcopy(model.state_dict())`, `target.load_state_dict(model.state_dict())` and
    `AveragedModel(model)` (which deep-copies it), in a
    loop that calls `backward()` or `optimizer.step()` (or in a function such a loop calls) and
    under no `if` (a copy taken when the validation loss improves, or every N steps, is left
    alone, and so is one in a `for epoch in ...` loop: full-graph training, one step per epoch,
    and an A3C/Hogwild worker that hands its gradients to a shared model by hand and loads the
    shared weights back). The copied value must be a model: named like one (`model`, `net`,
    `encoder`...) or built from an `nn` module class.

    ## Why is this bad
    A deep copy allocates and copies every parameter and buffer and walks the module tree in
    Python; `load_state_dict` copies every tensor too. Done on every step it can cost as much as
    the step itself. An exponential moving average needs an in-place update of the copy it
    already has; a target network needs a copy every N steps; a "best model" needs one only when
    the metric improves.

    ## Example
    ```python
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        ema_model = copy.deepcopy(model)
    ```

    ## Use instead
    ```python
    ema_model = torch.optim.swa_utils.AveragedModel(
        model, multi_avg_fn=torch.optim.swa_utils.get_ema_multi_avg_fn(0.999))
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        ema_model.update_parameters(model)  # in place
    ```

    ## Fix safety
    No automatic fix: what the copy is for (an average, a target network, a snapshot) decides
    what replaces it.
    """

    code = "TD130"
    name = "model-copy-per-step"

    def check(self, ctx):
        copies = [
            call
            for call in ctx.calls_to("copy.deepcopy")
            if _is_model_or_its_state(ctx, argument(call, "x", 0))
        ]
        copies += [
            call
            for call in ctx.calls_to(_AVERAGED_MODEL)
            if _is_model_or_its_state(ctx, argument(call, "model", 0))
        ]
        copies += [
            call
            for call in ctx.index.calls
            if method_call(call, "load_state_dict")
            and _is_model_or_its_state(ctx, argument(call, "state_dict", 0), state_only=True)
            and _is_model(ctx, receiver(call))
            and not _worker_pulls_shared_weights(ctx, call)
        ]
        for call in sorted(copies, key=ctx.line):
            if not every_step(ctx, call):
                continue
            yield ctx.violation(
                self,
                call,
                "the whole model is copied on every training step; update the copy in place "
                "(an EMA) or copy every N steps",
            )


_AVERAGED_MODEL = "torch.optim.swa_utils.AveragedModel"


def _worker_pulls_shared_weights(ctx, call: cst.Call) -> bool:
    """`local.load_state_dict(shared.state_dict())` in a loop that hands `local`'s gradients over
    by hand (`local.parameters()` and `.grad` read in the loop): an A3C/Hogwild worker stepping a
    shared model and pulling its weights back, which the algorithm needs after every update."""
    loop = ctx.enclosing(call, (cst.For, cst.While))
    target = receiver(call)
    if loop is None or target is None:
        return False
    target_code = ctx.code(target)
    reads_parameters = reads_grad = False
    for node in walk(ctx, loop.body):
        if method_call(node, "parameters", "named_parameters"):
            reads_parameters |= ctx.code(receiver(node)) == target_code
        elif isinstance(node, cst.Attribute) and node.attr.value in ("grad", "_grad"):
            reads_grad = True
    return reads_parameters and reads_grad


def _is_model_or_its_state(ctx, expr, state_only: bool = False) -> bool:
    """`model` or `model.state_dict()` (only the latter with `state_only`)."""
    if expr is None:
        return False
    if isinstance(expr, cst.Call) and method_call(expr, "state_dict") and not expr.args:
        return _is_model(ctx, receiver(expr))
    return not state_only and _is_model(ctx, expr)


def _is_model(ctx, expr: cst.BaseExpression) -> bool:
    """Named like a model, or built of `torch.nn` layers as far as the file shows."""
    if is_model_like(ctx, expr):
        return True
    finder = ctx.memo.get("nn_layer_finder")
    if finder is None:
        finder = ctx.memo["nn_layer_finder"] = LayerFinder(ctx, is_nn_class)
    assert isinstance(finder, LayerFinder)
    return finder.find(expr) is not None
