"""TD133: a loss tensor kept, with its autograd graph, across training steps."""

from __future__ import annotations

import libcst as cst

from torchdoctor.lint.patterns import (
    argument,
    grad_disabled_around,
    is_model_like,
    method_call,
    receiver,
    terminal_name,
    walk,
)
from torchdoctor.lint.rule import Rule
from torchdoctor.lint.steps import steps_here


class LossKeptAcrossSteps(Rule):
    """
    ## What it does
    Flags `total += loss`, `history.append(loss)` and `smooth = 0.98 * smooth + 0.02 * loss`
    in a training loop, where `loss` is the
    tensor the loop calls `backward()` on (or arithmetic on it, `loss * x.size(0)`), and the
    total or list lives across steps (it is not reset inside the loop). `loss.item()`,
    `loss.detach()` and `float(loss)` are what they should be and are left alone, and so is a total
    that the code itself calls `backward()` on (a loss accumulated on purpose), and one added
    under `torch.no_grad()`. Also flags a queue rebuilt every step from itself and a model's
    output that keeps its graph (`queue = torch.cat([k, queue])[:size]`, MoCo's keys computed
    without `torch.no_grad()` or `.detach()`).

    ## Why is this bad
    The loss holds its autograd graph, and the graph holds the step's saved activations. A
    running total or a list of losses keeps every step's graph alive: memory grows with every
    step until the epoch ends (or the run is out of memory), and each step gets slower as the
    allocator looks for room.

    ## Example
    ```python
    total_loss = 0.0
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total_loss += loss
    ```

    ## Use instead
    ```python
    total_loss = 0.0
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total_loss += loss.detach()  # or loss.item() when it is printed anyway
    ```

    ## Fix safety
    No automatic fix: whether the total should stay on the device (`detach()`) or become a
    number (`item()`, one host sync per step) is the author's choice.
    """

    code = "TD133"
    name = "loss-kept-across-steps"

    def check(self, ctx):
        backwarded = {
            terminal_name(receiver(n)) for n in ctx.index.calls if method_call(n, "backward")
        } - {None}
        for loop in ctx.index.loops:
            if not steps_here(ctx, loop.body):
                continue
            losses = {
                terminal_name(receiver(n))
                for n in walk(ctx, loop.body, skip_loops=True)
                if method_call(n, "backward") and isinstance(receiver(n), cst.Name)
            } - {None}
            losses -= _turned_into_numbers(ctx, loop)
            reset = _assigned_in(ctx, loop)
            yield from self._queues_of_outputs(ctx, loop, backwarded)
            for node in walk(ctx, loop.body, skip_loops=True):
                kept = _kept(ctx, node, losses)
                if kept is None:
                    continue
                holder = _holder_name(kept[0])
                if holder is None or holder in reset or holder in backwarded:
                    continue
                if grad_disabled_around(ctx, node):
                    continue  # under `torch.no_grad()` the total records no graph
                yield ctx.violation(
                    self,
                    node,
                    f"`{kept[1]}` keeps every step's autograd graph alive across steps; "
                    "keep `loss.detach()` or `loss.item()` instead",
                )

    def _queues_of_outputs(self, ctx, loop, backwarded: set[str]):
        """`queue = torch.cat([k, queue])[:size]`: a tensor rebuilt every step from itself and
        a model's output that still has its graph (not detached, not computed under
        `no_grad()`): every queued output keeps its step's graph alive."""
        for node in walk(ctx, loop.body, skip_loops=True):
            queued = _concatenated_onto_itself(ctx, node)
            if queued is None or queued[0] in backwarded:
                continue
            holder, parts = queued
            if grad_disabled_around(ctx, node):
                continue
            if any(_output_with_graph(ctx, loop, part) for part in parts):
                yield ctx.violation(
                    self,
                    node,
                    f"`{holder}` is rebuilt every step from a model output that still has its "
                    "graph: every step's graph stays alive; queue `.detach()`ed outputs (or "
                    "compute them under `torch.no_grad()`)",
                )


_CONCATENATIONS = ("torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.vstack")


def _concatenated_onto_itself(ctx, node) -> tuple[str, list[cst.Name]] | None:
    """(`queue`, the other names) of `queue = torch.cat([k, queue])`, also sliced (`[:size]`)."""
    if not (isinstance(node, cst.Assign) and len(node.targets) == 1):
        return None
    target = node.targets[0].target
    value = node.value.value if isinstance(node.value, cst.Subscript) else node.value
    if not (isinstance(target, cst.Name) and isinstance(value, cst.Call)):
        return None
    if ctx.call_name(value) not in _CONCATENATIONS:
        return None
    tensors = argument(value, "tensors", 0)
    if not isinstance(tensors, (cst.List, cst.Tuple)):
        return None
    names = [e.value for e in tensors.elements if isinstance(e.value, cst.Name)]
    if target.value not in {n.value for n in names}:
        return None
    return target.value, [n for n in names if n.value != target.value]


def _output_with_graph(ctx, loop, name: cst.Name) -> bool:
    """Every binding of `name` in the loop calls a model, with gradients on and no
    `.detach()`/`.item()` on the way."""
    bindings = [
        n
        for n in walk(ctx, loop.body, skip_loops=True)
        if isinstance(n, cst.Assign)
        and any(isinstance(t.target, cst.Name) and t.target.value == name.value for t in n.targets)
    ]
    return bool(bindings) and all(
        _calls_a_module(ctx, b.value)
        and not any(method_call(n, *_NUMBER_METHODS) for n in [b.value, *walk(ctx, b.value)])
        and not grad_disabled_around(ctx, b)
        for b in bindings
    )


_MODULE_METHODS = ("parameters", "named_parameters", "state_dict", "load_state_dict")


def _calls_a_module(ctx, expr: cst.BaseExpression) -> bool:
    """`expr` calls a model: a name like one (`model(x)`), or one the file treats as a module
    (`key_enc.parameters()`, `key_enc.load_state_dict(...)` somewhere)."""
    modules = {
        terminal_name(receiver(c)) for c in ctx.index.calls if method_call(c, *_MODULE_METHODS)
    } - {None}
    return any(
        isinstance(n, cst.Call) and (is_model_like(ctx, n.func) or terminal_name(n.func) in modules)
        for n in [expr, *walk(ctx, expr)]
    )


def _kept(ctx, node, losses: set[str]) -> tuple[cst.BaseExpression, str] | None:
    """(the holder, the code) of `holder += loss` or `holder.append(loss)`."""
    if isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.AddAssign):
        if _carries_graph(node.value, losses):
            return node.target, ctx.code(node).strip()
    if isinstance(node, cst.Assign) and len(node.targets) == 1:
        # `smooth = 0.98 * smooth + 0.02 * loss`: a running value rebuilt from itself
        target = node.targets[0].target
        if _rebuilt_from_itself(node) and _carries_graph(node.value, losses):
            return target, ctx.code(node).strip()
    if method_call(node, "append") and len(node.args) == 1:
        if _carries_graph(node.args[0].value, losses):
            return receiver(node), ctx.code(node).strip()
    return None


def _carries_graph(expr: cst.BaseExpression, losses: set[str]) -> bool:
    """The loss itself or arithmetic on it (`loss`, `loss * n`, `-loss`)."""
    if isinstance(expr, cst.Name):
        return expr.value in losses
    if isinstance(expr, cst.BinaryOperation):
        return _carries_graph(expr.left, losses) or _carries_graph(expr.right, losses)
    if isinstance(expr, cst.UnaryOperation):
        return _carries_graph(expr.expression, losses)
    return False


def _rebuilt_from_itself(assign: cst.Assign) -> bool:
    """`x = ... x ...` (arithmetic on the name it assigns): an accumulation, not a reset."""
    target = assign.targets[0].target
    if not isinstance(target, cst.Name) or not isinstance(assign.value, cst.BinaryOperation):
        return False
    stack: list[cst.BaseExpression] = [assign.value]
    while stack:
        expr = stack.pop()
        if isinstance(expr, cst.Name) and expr.value == target.value:
            return True
        if isinstance(expr, cst.BinaryOperation):
            stack += [expr.left, expr.right]
    return False


def _holder_name(target: cst.BaseExpression) -> str | None:
    """`total` of `total`, `self.total`, `totals[key]`."""
    if isinstance(target, cst.Subscript):
        target = target.value
    return terminal_name(target)


def _assigned_in(ctx, loop: cst.For | cst.While) -> set[str]:
    """Names (and attribute names) bound by `=` anywhere in the loop, nested loops included:
    a holder reset in the loop lives one step (or one inner pass) only."""
    names: set[str] = set()
    for node in walk(ctx, loop.body):
        if isinstance(node, cst.Assign) and not (
            len(node.targets) == 1 and _rebuilt_from_itself(node)
        ):
            for target in node.targets:
                name = _holder_name(target.target)
                if name:
                    names.add(name)
        elif isinstance(node, (cst.AnnAssign,)) and node.value is not None:
            name = _holder_name(node.target)
            if name:
                names.add(name)
    if isinstance(loop, cst.For):
        names |= {terminal_name(n) or "" for n in [loop.target]}
    return names


_NUMBER_METHODS = ("item", "detach", "cpu", "tolist")


def _turned_into_numbers(ctx, loop: cst.For | cst.While) -> set[str]:
    """Names the loop rebinds to a detached value or a number (`loss = loss.item()`)."""
    names = set()
    for node in walk(ctx, loop.body):
        if not (isinstance(node, cst.Assign) and isinstance(node.value, cst.Call)):
            continue
        value = node.value
        if method_call(value, *_NUMBER_METHODS) or ctx.call_name(value) in (
            "builtins.float",
            "builtins.int",
        ):
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    names.add(target.target.value)
    return names
