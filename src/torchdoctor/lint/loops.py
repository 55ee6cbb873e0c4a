"""Python loops that step through a tensor one index at a time: what the loop counts, what its
body indexes with the loop's variable, and what it carries from one iteration to the next.

Shared by the rules about per-row loops (TD120) and recurrent cells stepped over time (TD135).
"""

from __future__ import annotations

import libcst as cst

from torchdoctor.lint.patterns import (
    int_value,
    method_call,
    names_in,
    receiver,
    terminal_name,
    walk,
)


def counted_dimension(ctx, bound) -> tuple[str, int, bool] | None:
    """`(x, d, by_size)` when `bound` counts dimension `d` of `x`: `len(x)` (d 0), `x.shape[d]`,
    `x.size(d)`, `x.size()[d]`; `by_size` when counted by the `size()` method, which only tensors
    have (NumPy's `size` is a field)."""
    if (
        isinstance(bound, cst.Call)
        and ctx.call_name(bound) == "builtins.len"
        and len(bound.args) == 1
    ):
        counted = bound.args[0].value
        return (counted.value, 0, False) if isinstance(counted, cst.Name) else None
    if isinstance(bound, cst.Subscript) and len(bound.slice) == 1:
        index = bound.slice[0].slice
        dim = int_value(index.value) if isinstance(index, cst.Index) else None
        if dim is None or dim < 0:
            return None
        base = bound.value
        if (
            isinstance(base, cst.Attribute)
            and base.attr.value == "shape"
            and isinstance(base.value, cst.Name)
        ):
            return (base.value.value, dim, False)
        sized = receiver(base) if method_call(base, "size") else None
        if isinstance(base, cst.Call) and not base.args and isinstance(sized, cst.Name):
            return (sized.value, dim, True)
        return None
    if isinstance(bound, cst.Call) and method_call(bound, "size") and len(bound.args) == 1:
        dim = int_value(bound.args[0].value)
        sized = receiver(bound)
        if dim is not None and dim >= 0 and isinstance(sized, cst.Name):
            return (sized.value, dim, True)
    return None


def _full_slice(element: cst.SubscriptElement) -> bool:
    part = element.slice
    return (
        isinstance(part, cst.Slice)
        and part.lower is None
        and part.upper is None
        and part.step is None
    )


def index_along(node: cst.CSTNode, variable: str, dim: int) -> cst.Name | None:
    """`x` when `node` is `x[i]` (dim 0) or `x[:, i]`, `x[:, :, i, ...]` (dim d: d full slices
    before the loop's variable `i`); None otherwise."""
    if not (isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name)):
        return None
    elements = node.slice
    if len(elements) <= dim or (dim == 0 and len(elements) != 1):
        return None
    if not all(_full_slice(e) for e in elements[:dim]):
        return None
    index = elements[dim].slice
    if isinstance(index, cst.Index) and terminal_name(index.value) == variable:
        return node.value
    return None


def indexed_along(ctx, body: cst.CSTNode, variable: str, dim: int) -> dict[str, cst.Name]:
    """Names indexed along dimension `dim` by the loop's variable anywhere in `body`."""
    found = {}
    for node in walk(ctx, body):
        name = index_along(node, variable, dim)
        if name is not None:
            found[name.value] = name
    return found


def carried_names(ctx, statements: list[cst.SimpleStatementLine]) -> set[str]:
    """Names the statements assign that an earlier statement (or the assignment's own value)
    reads: values carried from one iteration to the next (`h = cell(x[t], h)`, `gae = delta +
    gamma * gae`)."""
    assigned: set[str] = set()
    for line in statements:
        for small in line.body:
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    assigned |= names_in(target.target)
    carried = set()
    bound_so_far: set[str] = set()
    for line in statements:
        for small in line.body:
            reads = {
                n.value
                for n in walk(ctx, small)
                if isinstance(n, cst.Name) and not _is_target(ctx, n)
            }
            carried |= (reads & assigned) - bound_so_far
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    bound_so_far |= names_in(target.target)
    return carried


def all_names(node: cst.CSTNode) -> set[str]:
    """Every name anywhere in `node` (`{"agg", "dst", "e"}` for `agg[dst[e]]`)."""
    found = {node.value} if isinstance(node, cst.Name) else set()
    for child in node.children:
        found |= all_names(child)
    return found


def _is_target(ctx, name: cst.Name) -> bool:
    """`name` is (part of) the target of an assignment, not a read."""
    child: cst.CSTNode = name
    parent = ctx.parent(child)
    while isinstance(parent, (cst.Element, cst.Tuple, cst.List)):
        child, parent = parent, ctx.parent(parent)
    return isinstance(parent, cst.AssignTarget) and parent.target is child


def after_return(ctx, statement: cst.CSTNode) -> bool:
    """`statement` follows a `return` in its block: dead code, never run."""
    block = ctx.parent(statement)
    body = getattr(block, "body", ())
    for current in body if isinstance(body, (list, tuple)) else ():
        if current is statement:
            return False
        if isinstance(current, cst.SimpleStatementLine) and any(
            isinstance(small, cst.Return) for small in current.body
        ):
            return True
    return False
