"""TD116: host synchronisation on every training step."""

from __future__ import annotations

import re

import libcst as cst

from torchdoctor.lint.patterns import (
    argument,
    is_plain_function,
    method_call,
    receiver,
    terminal_name,
    value_method,
    walk,
)
from torchdoctor.lint.rule import Rule
from torchdoctor.lint.steps import (
    guarded_in,
    is_epoch_loop,
    is_step_loop,
    module_calls_every_step,
)
from torchdoctor.lint.tensors import is_tensor, tensor_parameter

SYNC_METHODS = ("item", "cpu", "numpy", "tolist")
_OPTIMIZER_RE = re.compile(r"opt|scaler", re.IGNORECASE)


def is_training_loop(ctx, loop: cst.For | cst.While) -> bool:
    for node in walk(ctx, loop.body, skip_loops=True):
        if method_call(node, "backward"):
            return True
        if method_call(node, "step") and _OPTIMIZER_RE.search(terminal_name(receiver(node)) or ""):
            return True
    return False


def _unscaled(expr: cst.BaseExpression) -> cst.BaseExpression:
    """`loss` for `scaler.scale(loss)` (the AMP spelling of `loss.backward()`)."""
    if isinstance(expr, cst.Call) and method_call(expr, "scale") and expr.args:
        return expr.args[0].value
    return expr


class PerStepHostSync(Rule):
    """
    ## What it does
    Flags `.item()`, `.cpu()`, `.numpy()`, `.tolist()` and `print(loss)` that run on every
    iteration of a training loop (a loop that calls `backward()` or `optimizer.step()`), also
    in a loop nested in it (one read per sample, per parameter, per environment step), i.e.
    not under an `if` such as `if step % log_every == 0:`; also in a function the loop calls on
    every step, the `forward` of a module class of the file included when the loop calls an
    instance of it (`model(x)` for `model = Net()`; a `.cpu()` handed to a torch function such
    as `pack_padded_sequence` is needed on the host and left alone). A value a nested loop hands to an
    environment's `step()` (`env.step(action.item())`) is needed on the host and left alone. Only values the code shows to be
    tensors count: the loss, a model's or a loss module's output (`nn.CrossEntropyLoss()(out, y)`
    included), results of `torch` functions and of arithmetic, comparisons and tensor methods
    on them, `param.grad`. `.cpu()` on a model, or on a value of unknown type, is not flagged,
    nor `value = loss.item()` when the loop tests `value` to stop (`if value < tol: break`,
    `while value > tol:`, `if isnan(value): raise ...`): the loop needs the number every step.

    ## Why is this bad
    Each of them copies a value to the host, which waits for every queued GPU kernel to finish:
    the CPU can no longer run ahead and queue the next step, so the GPU idles between steps.

    ## Example
    ```python
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    ```

    ## Use instead
    ```python
    for step, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        running += loss.detach()
        if step % 100 == 0:
            losses.append(running.item() / 100)
            running.zero_()
    ```

    ## Fix safety
    No automatic fix: accumulating on the device changes how and when values are logged.
    """

    code = "TD116"
    name = "per-step-host-sync"

    def check(self, ctx):
        yield from self._check_loops(ctx)
        yield from self._check_step_helpers(ctx)

    def _check_step_helpers(self, ctx):
        """Reads in a function of this file that a training loop calls on every step, under no
        `if` (a metrics helper, a hand-written clipping, `train_step` itself): they run once per
        step too. Values count as tensors by what the code shows, parameters included when
        every call in the file passes a tensor (`meter.update(loss)`)."""
        for function in ctx.index.functions:
            if set(function.name.value.lower().strip("_").split("_")) & _EVAL_WORDS:
                continue  # an evaluation helper: its metrics need the host (full-graph loops)
            if any(
                is_training_loop(ctx, loop)
                for loop in ctx.index.loops
                if ctx.is_inside(loop, function)
            ):
                continue
            module_calls = module_calls_every_step(ctx, function)
            if not module_calls and not called_every_step(ctx, function):
                continue
            losses = {
                terminal_name(_unscaled(n.func.value))
                for n in walk(ctx, function.body)
                if method_call(n, "backward")
            } - {None}
            syncs = [
                node
                for statement in _reachable(function)
                for node in walk(ctx, statement)
                if value_method(ctx, node, *SYNC_METHODS)
                and (
                    is_tensor(ctx, node.func.value, losses)
                    or _tensor_parameter_read(ctx, node.func.value)
                    or _forward_input_read(ctx, node.func.value, function, module_calls)
                )
                and not _built_on_host(ctx, node.func.value)
                and not (module_calls and _handed_to_torch(ctx, node))
                and not guarded_in(ctx, node, function)
            ]
            chained = {id(call) for n in syncs for call in _chain_below(n)}
            for node in syncs:
                if id(node) in chained:  # `loss.cpu().numpy().item()` reported once
                    continue
                yield ctx.violation(
                    self,
                    node,
                    f"`.{node.func.attr.value}()` in `{function.name.value}()`, which the "
                    "training loop calls on every step, waits for the GPU; accumulate on "
                    "the device and read it every N steps",
                )

    def _check_loops(self, ctx):
        for loop in ctx.index.loops:
            if not is_training_loop(ctx, loop):
                continue
            losses = {
                terminal_name(_unscaled(n.func.value))
                for n in walk(ctx, loop.body, skip_loops=True)
                if method_call(n, "backward")
            } - {None}
            syncs = [
                n
                for n in _run_every_step(ctx, loop)
                if self._is_sync(ctx, n, losses)
                and not self._guarded(ctx, n, loop)
                and not _decides_exit(ctx, n, loop)
                and not _feeds_an_environment(ctx, n, loop)
            ]
            if syncs:
                # once the loop is shown to sync on a loss, its other `.item()` reads (other
                # losses, accuracies) sync on every step too
                flagged = {id(n) for n in syncs}
                syncs += [
                    n
                    for n in walk(ctx, loop.body, skip_loops=True)
                    if id(n) not in flagged
                    and value_method(ctx, n, "item")
                    and not self._guarded(ctx, n, loop)
                ]
                syncs.sort(key=ctx.line)
            receivers = {id(call) for n in syncs for call in _chain_below(n)}
            for call in syncs:
                if id(call) not in receivers:  # report `x.cpu().detach().numpy()` once
                    what = (
                        f".{call.func.attr.value}()"
                        if isinstance(call.func, cst.Attribute)
                        else "print(loss)"
                    )
                    yield ctx.violation(
                        self,
                        call,
                        f"`{what}` on every training step waits for the GPU; accumulate on "
                        "the device and read it every N steps",
                    )

    @staticmethod
    def _is_sync(ctx, node, losses: set[str]) -> bool:
        if value_method(ctx, node, *SYNC_METHODS):
            return is_tensor(ctx, node.func.value, losses)
        if isinstance(node, cst.Call) and ctx.call_name(node) == "builtins.print":
            # `print(loss)` formats the tensor on the host; `print(loss.item())` is reported above
            return any(
                isinstance(n, cst.Name)
                and n.value in losses
                and not isinstance(ctx.parent(n), cst.Attribute)
                and not _keyword_of(ctx, n)
                for arg in node.args
                for n in [arg.value, *walk(ctx, arg.value)]
            )
        return False

    @staticmethod
    def _guarded(ctx, node, loop) -> bool:
        for ancestor in ctx.ancestors(node):
            if ancestor is loop:
                return False
            if isinstance(ancestor, cst.If):
                return True
        return False


def _keyword_of(ctx, name: cst.Name) -> bool:
    """`loss` in `"{loss.avg}".format(loss=meter)`: the keyword's name, not a value."""
    parent = ctx.parent(name)
    return isinstance(parent, cst.Arg) and parent.keyword is name


_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_EVAL_WORDS = {"validate", "validation", "evaluate", "evaluation", "eval", "val", "valid", "test"}


def called_every_step(ctx, function: cst.FunctionDef) -> bool:
    """A step loop of this file calls `function` (by name, `self.name(...)` included) under no
    `if`, and that loop is no `for epoch in ...` loop."""
    # a plain function is called by its name (`step(batch)`), a method on an object
    # (`self.step()`): `optimizer.step()` calls no local function `step`
    kind = cst.Name if is_plain_function(ctx, function) else cst.Attribute
    for call in ctx.index.calls:
        if (
            not isinstance(call.func, kind)
            or terminal_name(call.func) != function.name.value
            or ctx.is_inside(call, function)
            or (isinstance(call.func, cst.Name) and not _binds(ctx, call.func, function))
        ):
            continue
        loop = ctx.enclosing(call, (cst.For, cst.While))
        if (
            loop is not None
            and is_step_loop(ctx, loop)
            and not is_epoch_loop(loop)
            and not guarded_in(ctx, call, loop)
        ):
            return True
    return False


def _reachable(function: cst.FunctionDef) -> list[cst.CSTNode]:
    """The statements of `function`'s body up to its first unconditional `return`."""
    body = function.body.body if isinstance(function.body, cst.IndentedBlock) else []
    reached: list[cst.CSTNode] = []
    for statement in body:
        reached.append(statement)
        if isinstance(statement, cst.SimpleStatementLine) and any(
            isinstance(small, cst.Return) for small in statement.body
        ):
            break
    return reached


# torch factories that build a tensor on the CPU unless given `device=`
_HOST_FACTORIES = {
    f"torch.{n}"
    for n in "randperm randint arange tensor zeros ones rand randn empty full linspace".split()
}


def _built_on_host(ctx, value: cst.BaseExpression) -> bool:
    """`classes.tolist()` for `classes = torch.randperm(n)[:p]`: a tensor a torch factory
    built on the CPU (no `device=`); reading it waits for no GPU."""
    while isinstance(value, (cst.Call, cst.Subscript, cst.Attribute)):
        if isinstance(value, cst.Call) and ctx.call_name(value) in _HOST_FACTORIES:
            return argument(value, "device", 99) is None
        value = value.func if isinstance(value, cst.Call) else value.value
    if isinstance(value, cst.Name):
        bound = ctx.single_value(value)
        return bound is not None and _built_on_host(ctx, bound)
    return False


def _binds(ctx, name: cst.Name, function: cst.FunctionDef) -> bool:
    """`name`, where it is used, may be `function` (the `def` is one of its bindings in that
    scope), not a loop variable or a parameter of the same name."""
    scope = ctx.scope(name)
    if scope is None:
        return False
    return any(getattr(a, "node", None) is function for a in scope[name.value])


def _tensor_parameter_read(ctx, value: cst.BaseExpression) -> bool:
    """`value` (or the name it is a method or subscript of) is a parameter every call passes a
    tensor for."""
    while isinstance(value, (cst.Call, cst.Subscript, cst.Attribute)):
        value = value.func if isinstance(value, cst.Call) else value.value
    return isinstance(value, cst.Name) and tensor_parameter(ctx, value)


def _forward_input_read(
    ctx, value: cst.BaseExpression, forward: cst.FunctionDef, module_calls: list[cst.Call]
) -> bool:
    """`value` (or the name it is a method or subscript of) is an input of `forward` that every
    call of the module in the step loop passes a tensor for (`model(x[idx])`)."""
    while isinstance(value, (cst.Call, cst.Subscript, cst.Attribute)):
        value = value.func if isinstance(value, cst.Call) else value.value
    params = [p.name.value for p in forward.params.params][1:]  # after `self`
    if not module_calls or not isinstance(value, cst.Name) or value.value not in params:
        return False
    if ctx.enclosing(value, cst.FunctionDef) is not forward:
        return False
    position = params.index(value.value)
    passed = [argument(call, value.value, position) for call in module_calls]
    return all(given is not None and is_tensor(ctx, given) for given in passed)


def _handed_to_torch(ctx, sync: cst.Call) -> bool:
    """The read is an argument of a torch function that needs it on the host
    (`pack_padded_sequence(x, lengths.cpu())`)."""
    parent = ctx.parent(sync)
    call = ctx.parent(parent) if isinstance(parent, cst.Arg) else None
    return isinstance(call, cst.Call) and (ctx.call_name(call) or "").startswith("torch.")


def _run_every_step(ctx, loop: cst.For | cst.While):
    """The nodes of training loop `loop`'s body, and of the loops nested in it that are no
    training loops themselves (`for i in range(len(y)): correct += hits[i].item()` runs all its
    reads on every step; a nested training loop is checked on its own)."""
    stack = list(reversed(ctx.children(loop.body)))
    while stack:
        current = stack.pop()
        yield current
        if isinstance(current, _SCOPES) or (
            isinstance(current, (cst.For, cst.While)) and is_training_loop(ctx, current)
        ):
            continue
        stack.extend(reversed(ctx.children(current)))


def _feeds_an_environment(ctx, sync: cst.Call, loop) -> bool:
    """In a loop nested in the training loop, the read value goes to an environment's `step()`
    (`env.step(action.item())`, directly or through a name): the environment needs the number
    on the host."""
    if ctx.enclosing(sync, (cst.For, cst.While)) is loop:
        return False
    statement = ctx.parent(sync)
    names = set()
    if isinstance(statement, cst.Assign):
        names = {terminal_name(t.target) for t in statement.targets} - {None}
    for node in walk(ctx, loop.body):
        if not (
            isinstance(node, cst.Call)
            and method_call(node, "step")
            and not _OPTIMIZER_RE.search(terminal_name(receiver(node)) or "")
        ):
            continue
        for arg in node.args:
            inside = [arg.value, *walk(ctx, arg.value)]
            if any(n is sync for n in inside) or any(
                isinstance(n, cst.Name) and n.value in names for n in inside
            ):
                return True
    return False


def _chain_below(call: cst.Call) -> list[cst.Call]:
    """The method calls `call` is chained on: `.cpu()` and `.detach()` below the `.numpy()` of
    `x.cpu().detach().numpy()`, one sync read reported once."""
    below = []
    value = call.func.value if isinstance(call.func, cst.Attribute) else None
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        below.append(value)
        value = value.func.value
    return below


def _decides_exit(ctx, sync: cst.Call, loop) -> bool:
    """`value = loss.item()` whose value an `if` in the loop tests to leave it (`if value <
    tol: break`, `if value > 1e8: raise ...` on a diverged loss): the loop cannot go on without
    the number, so the sync is needed."""
    statement = ctx.parent(sync)
    if not isinstance(statement, cst.Assign) or len(statement.targets) != 1:
        return False
    target = statement.targets[0].target
    if not isinstance(target, cst.Name):
        return False

    def names_it(test: cst.BaseExpression) -> bool:
        return any(
            isinstance(n, cst.Name) and n.value == target.value for n in [test, *walk(ctx, test)]
        )

    if isinstance(loop, cst.While) and names_it(loop.test):  # `while value > tol:`
        return True
    return any(
        isinstance(node, cst.If)
        and names_it(node.test)
        and any(isinstance(n, (cst.Break, cst.Return, cst.Raise)) for n in walk(ctx, node.body))
        for node in walk(ctx, loop.body, skip_loops=True)
    )
