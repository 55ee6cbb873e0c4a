"""TD135: a recurrent cell stepped over a sequence the program already holds, in Python."""

from __future__ import annotations

import libcst as cst

from torchdoctor.lint.loops import after_return, all_names, counted_dimension, index_along
from torchdoctor.lint.patterns import int_value, positional, terminal_name, walk
from torchdoctor.lint.rule import Rule

_RECURRENT = {
    f"torch.nn.{name}": fused
    for name, fused in (
        ("LSTMCell", "LSTM"),
        ("GRUCell", "GRU"),
        ("RNNCell", "RNN"),
        ("LSTM", "LSTM"),
        ("GRU", "GRU"),
        ("RNN", "RNN"),
    )
}
# `x.split(1, dim=1)`, `x.unbind(1)`, `torch.unbind(x, 1)`, `x.chunk(n, 1)`: one slice per step
_STEP_SLICERS = {"split", "unbind", "chunk"}


class RnnCellLoop(Rule):
    """
    ## What it does
    Flags a Python loop over the time steps of a sequence the program already has
    (`for t in range(x.size(1))` reading `x[:, t]`, `for x_t in x.split(1, dim=1)`,
    `x.unbind(1)`) that calls a recurrent layer of `torch.nn` (`LSTMCell`, `GRUCell`,
    `RNNCell`, or `LSTM`/`GRU`/`RNN` one step at a time) on each step's slice, directly or
    through a method of the class that runs one step of a cell (`self.cell_step(x[:, t], h)`
    over `torch.gru_cell(...)` or `self.cell(...)`). Left alone: a loop
    whose next input is computed inside the loop (autoregressive decoding, scheduled sampling),
    which the fused layer cannot run.

    ## Why is this bad
    Each step is a separate call with its own small matrix products, Python and dispatch
    overhead (and kernel launches on a GPU): a 200-step sequence costs hundreds of tiny ops
    forward and again backward. `nn.LSTM` runs the whole sequence in one call, with fused kernels
    (cuDNN on a GPU), and computes the input projections of all steps in one matrix product.

    ## Example
    ```python
    cell = nn.LSTMCell(8, 32)
    h = c = torch.zeros(16, 32)
    for t in range(x.size(1)):
        h, c = cell(x[:, t], (h, c))
    ```

    ## Use instead
    ```python
    lstm = nn.LSTM(8, 32, batch_first=True)
    out, (h, c) = lstm(x)
    ```

    ## Fix safety
    No automatic fix: the layer's weights, state layout and output shapes change.
    """

    code = "TD135"
    name = "rnn-cell-loop"

    def check(self, ctx):
        for loop in ctx.index.loops:
            if not isinstance(loop, cst.For):
                continue
            step_input = _step_input(ctx, loop)
            if step_input is None or after_return(ctx, loop):
                continue
            assigned = _assigned_in(ctx, loop.body)
            for node in walk(ctx, loop.body):
                if not isinstance(node, cst.Call):
                    continue
                layer = _recurrent_layer(ctx, node.func) or _method_stepping_a_cell(ctx, node.func)
                args = positional(node)
                if layer is None or not args:
                    continue
                given = args[0].value
                if all_names(given) & assigned or not any(
                    step_input(n) for n in [given, *walk(ctx, given)]
                ):
                    continue  # its input comes from the loop itself (decoding) or not per step
                yield ctx.violation(
                    self,
                    loop,
                    f"`{ctx.code(node.func)}` (`nn.{layer[0]}`) is stepped over the sequence in "
                    f"Python, one call per time step; run the whole sequence through "
                    f"`nn.{layer[1]}` in one call",
                )
                break


def _step_input(ctx, loop: cst.For):
    """A predicate on nodes: is this the loop's slice of the sequence for the current step?"""
    iterator = loop.iter
    if not isinstance(iterator, cst.Call):
        return None
    if isinstance(loop.target, cst.Name) and ctx.call_name(iterator) == "builtins.range":
        if len(iterator.args) != 1 or counted_dimension(ctx, iterator.args[0].value) is None:
            return None
        variable = loop.target.value
        return lambda node: any(index_along(node, variable, dim) is not None for dim in range(3))
    func = iterator.func
    sliced = (
        isinstance(func, cst.Attribute)
        and func.attr.value in _STEP_SLICERS
        and not ctx.is_imported(func)
        and _one_step_slices(iterator)
    ) or ctx.call_name(iterator) == "torch.unbind"
    if sliced and isinstance(loop.target, cst.Name):
        name = loop.target.value
        return lambda node: isinstance(node, cst.Name) and node.value == name
    return None


def _one_step_slices(call: cst.Call) -> bool:
    """`split(1, ...)` and `unbind(...)` give one time step per slice; `chunk(n)` gives n pieces
    of any length, and `split(k)` with k > 1 gives windows."""
    method = call.func.attr.value if isinstance(call.func, cst.Attribute) else ""
    if method == "unbind":
        return True
    if method == "split":
        size = call.args[0].value if call.args else None
        return int_value(size) == 1
    return False


def _recurrent_layer(ctx, func: cst.BaseExpression) -> tuple[str, str] | None:
    """(the layer's class, its fused form) when `func` holds an `nn.LSTMCell`-like layer (on some
    branch of how it is built: `nn.LSTM(...) if fused else nn.LSTMCell(...)`)."""
    if isinstance(func, cst.Attribute) and terminal_name(func.value) == "self":
        values = [v for t, v in ctx.index.attribute_assigns if t.attr.value == func.attr.value]
    elif isinstance(func, cst.Name):
        values = ctx.assigned_values(func) or []
    else:
        return None
    found = set()
    for value in values:
        for option in [value.body, value.orelse] if isinstance(value, cst.IfExp) else [value]:
            name = ctx.call_name(option) if isinstance(option, cst.Call) else None
            if name in _RECURRENT:
                found.add(name)
    if not found:
        return None
    name = min(found, key=lambda n: (not n.endswith("Cell"), n))  # the cell, where one is built
    return (name.rsplit(".", 1)[1], _RECURRENT[name])


# the functional cells `nn.GRUCell` & co. call: a hand-written cell step over a layer's weights
_FUNCTIONAL_CELLS = {
    "torch.gru_cell": ("GRUCell", "GRU"),
    "torch.lstm_cell": ("LSTMCell", "LSTM"),
    "torch.rnn_tanh_cell": ("RNNCell", "RNN"),
    "torch.rnn_relu_cell": ("RNNCell", "RNN"),
}


def _method_stepping_a_cell(ctx, func: cst.BaseExpression) -> tuple[str, str] | None:
    """(the cell, its fused form) when `func` is `self.<method>` of the enclosing class and that
    method runs one step of a recurrent cell (`h = self.cell(x, h)`, `torch.gru_cell(...)`),
    outside any loop of its own: `self.cell_step(x[:, t], h)` is the cell, one level down."""
    if not (isinstance(func, cst.Attribute) and terminal_name(func.value) == "self"):
        return None
    cls = ctx.enclosing(func, cst.ClassDef)
    if cls is None:
        return None
    for statement in cls.body.body:
        if not (isinstance(statement, cst.FunctionDef) and statement.name.value == func.attr.value):
            continue
        for node in walk(ctx, statement.body, skip_loops=True):
            if isinstance(node, (cst.For, cst.While)):
                return None  # it loops itself: a whole sequence, not one step
            if isinstance(node, cst.Call):
                cell = _FUNCTIONAL_CELLS.get(ctx.call_name(node) or "") or _recurrent_layer(
                    ctx, node.func
                )
                if cell is not None:
                    return cell
    return None


def _assigned_in(ctx, body: cst.CSTNode) -> set[str]:
    found: set[str] = set()
    for node in walk(ctx, body):
        if isinstance(node, cst.AssignTarget):
            found |= all_names(node.target)
    return found
