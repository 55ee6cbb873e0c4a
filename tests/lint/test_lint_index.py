"""The index's own walk (no libcst rebuild) sees what libcst's `visit` sees, in the same order,
and scopes resolved over it are the ones libcst resolves by itself."""

from __future__ import annotations

import libcst as cst
from libcst.metadata import MetadataWrapper, ScopeProvider

from torchdoctor.lint.context import FileContext
from torchdoctor.lint.index import NodeIndex

SOURCE = """
import torch as T
from torch import nn
from typing import Optional
counter = 0

@T.no_grad()
@decorate(level=2)
def evaluate(model: "nn.Module", loader, *args, scale: float = 1.0, **kw) -> Optional[int]:
    global counter
    total = [model(x).sum() for x, _ in loader if x is not None]
    best = {k: v for k, v in kw.items()}
    pick = total[0] if total else None
    try:
        counter += 1
    except (ValueError, KeyError) as exc:
        raise RuntimeError(f"{exc!r} {counter:>4}") from exc
    finally:
        pass
    with T.autocast("cpu"), open("x") as handle:
        handle.write(lambda y=1, *z: y + len(z))
    async def inner():
        nonlocal pick
        async for item in stream():
            await item
    return pick, best, (yield scale)

class Net(nn.Module, metaclass=Meta):
    size: int = 3
    def forward(self, x):
        return x[:, 1:2, ...] @ self.w ** -1 if (n := len(x)) else x[n]
"""


def _significant(children):
    trivia = (
        cst.BaseParenthesizableWhitespace,
        cst.LeftParen,
        cst.RightParen,
        cst.LeftSquareBracket,
        cst.RightSquareBracket,
        cst.LeftCurlyBrace,
        cst.RightCurlyBrace,
        cst.Comma,
        cst.Dot,
        cst.Colon,
        cst.AssignEqual,
        cst.Semicolon,
        cst.EmptyLine,
        cst.Newline,
        cst.TrailingWhitespace,
        cst.Asynchronous,
    )
    return [id(c) for c in children if not isinstance(c, trivia)]


def test_index_children_are_libcsts_in_source_order():
    module = cst.parse_module(SOURCE)
    index = NodeIndex().build(module)
    checked = 0
    for node in _all(module):
        if id(node) in index.children:
            assert [id(c) for c in index.children[id(node)]] == _significant(node.children), type(
                node
            ).__name__
            checked += 1
    assert checked > 100
    assert len(index.calls) == sum(isinstance(n, cst.Call) for n in _all(module))


def _all(module):
    found = []

    class Collect(cst.CSTVisitor):
        def on_visit(self, node):
            found.append(node)
            return True

    module.visit(Collect())
    return found


def test_scopes_over_the_index_walk_are_libcsts():
    module = cst.parse_module(SOURCE)
    ctx = FileContext("t.py", SOURCE, module)
    reference = MetadataWrapper(module, unsafe_skip_copy=True).resolve(ScopeProvider)
    names = [n for n in _all(module) if isinstance(n, (cst.Name, cst.Attribute, cst.Call))]
    compared = 0
    for node in names:
        scope = reference.get(node)
        expected = set(scope.get_qualified_names_for(node)) if scope is not None else set()
        assert ctx._raw_qualified_names(node) == expected, ctx.code(node)
        compared += bool(expected)
    assert compared > 20
    assert ctx.qualified_name(cst.ensure_type(module.body[0], cst.SimpleStatementLine)) is None
    decorator = next(n for n in _all(module) if isinstance(n, cst.Decorator))
    assert (
        ctx.qualified_name(cst.ensure_type(decorator.decorator, cst.Call).func) == "torch.no_grad"
    )
