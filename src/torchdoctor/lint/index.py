"""One pass over a module that records what every rule asks about.

Rules query these lists instead of walking the tree again, so a file costs one parse, one
metadata resolution and one traversal however many rules are enabled.

The pass reads each node's fields directly instead of using libcst's `visit`, which rebuilds
(and re-validates) every node it passes through: that rebuild was most of lint's time. Trivia
(whitespace, parentheses, commas, brackets, blank lines) is not recorded: no rule asks for it.
"""

from __future__ import annotations

import dataclasses
from contextlib import contextmanager

import libcst as cst

# Fields that hold only layout, never code a rule or a scope looks at.
_TRIVIA_FIELDS = frozenset(
    (
        "lpar rpar comma equal dot colon semicolon lbracket rbracket lbrace rbrace "
        "leading_lines lines_after_decorators header footer newline trailing_whitespace "
        "empty_lines asynchronous first_colon second_colon"
    ).split()
)
# Node types whose dataclass fields are not declared in source order (every other type's are,
# once trivia is left out): the order their code is written in.
_SOURCE_ORDER: dict[type, tuple[str, ...]] = {
    cst.Arg: ("keyword", "value"),
    cst.IfExp: ("body", "test", "orelse"),
    cst.FunctionDef: ("decorators", "name", "type_parameters", "params", "returns", "body"),
    cst.ClassDef: ("decorators", "name", "type_parameters", "bases", "keywords", "body"),
    cst.ExceptHandler: ("type", "name", "body"),
    cst.ExceptStarHandler: ("type", "name", "body"),
}
_FIELDS: dict[type, tuple[str, ...]] = {}


def _code_fields(kind: type) -> tuple[str, ...]:
    names = _FIELDS.get(kind)
    if names is None:
        declared = _SOURCE_ORDER.get(kind) or tuple(f.name for f in dataclasses.fields(kind))
        names = tuple(
            n for n in declared if n not in _TRIVIA_FIELDS and not n.startswith("whitespace")
        )
        _FIELDS[kind] = names
    return names


def code_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """`node`'s children that hold code, in source order, without rebuilding `node`."""
    found: list[cst.CSTNode] = []
    for name in _code_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            found.append(value)
        elif isinstance(value, (tuple, list)):
            found.extend(v for v in value if isinstance(v, cst.CSTNode))
    return found


@contextmanager
def recorded_traversal(children: dict[int, list[cst.CSTNode]]):
    """While open, `node.visit(visitor)` of a read-only visitor walks the children recorded in
    `children` instead of rebuilding each node (libcst's metadata providers traverse the tree
    through `visit`); a node not recorded (a string annotation a provider parses) and a
    transformer take libcst's own path. Attribute hooks (`visit_<Node>_<field>`) are not called:
    the providers lint resolves (scopes, expression contexts) define none that run."""
    original = cst.CSTNode.visit

    def visit(node, visitor):
        kids = children.get(id(node))
        if kids is None or not isinstance(visitor, cst.CSTVisitor):
            return original(node, visitor)
        if visitor.on_visit(node):
            for child in kids:
                child.visit(visitor)
        visitor.on_leave(node)
        return node

    cst.CSTNode.visit = visit  # type: ignore[method-assign]
    try:
        yield
    finally:
        cst.CSTNode.visit = original  # type: ignore[method-assign]


class NodeIndex:
    def __init__(self) -> None:
        self.parents: dict[int, cst.CSTNode] = {}
        # id(node) -> its children in source order (libcst's `.children` re-walks on each call)
        self.children: dict[int, list[cst.CSTNode]] = {}
        self.calls: list[cst.Call] = []
        self.loops: list[cst.For | cst.While] = []
        self.functions: list[cst.FunctionDef] = []
        self.classes: list[cst.ClassDef] = []
        self.withs: list[cst.With] = []
        self.binary_ops: list[cst.BinaryOperation] = []
        # id(Name target) -> the value assigned to it (plain `name = value` only)
        self.assigned: dict[int, cst.BaseExpression] = {}
        # name -> every value bound to it by a plain assignment, in any scope
        self.bindings: dict[str, list[cst.BaseExpression]] = {}
        # (target, value) for `a.b.c = value`
        self.attribute_assigns: list[tuple[cst.Attribute, cst.BaseExpression]] = []
        self.aug_assigns: list[cst.AugAssign] = []
        self.import_froms: list[cst.ImportFrom] = []
        self.imports: list[cst.Import] = []
        self.torch_aliases: list[str] = []  # names bound to the `torch` module itself

    def build(self, module: cst.Module) -> NodeIndex:
        """Record `module` in source order (a pre-order walk)."""
        stack: list[cst.CSTNode] = [module]
        parents, children = self.parents, self.children
        while stack:
            node = stack.pop()
            kids = code_children(node)
            children[id(node)] = kids
            for kid in kids:
                parents[id(kid)] = node
            self._record(node)
            stack.extend(reversed(kids))
        return self

    def _record(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.Call):
            self.calls.append(node)
        elif isinstance(node, cst.BinaryOperation):
            self.binary_ops.append(node)
        elif isinstance(node, cst.Assign):
            self._record_assign(node)
        elif isinstance(node, cst.AnnAssign) and node.value is not None:
            self._record_target(node.target, node.value)
        elif isinstance(node, cst.AugAssign):
            self.aug_assigns.append(node)
        elif isinstance(node, (cst.For, cst.While)):
            self.loops.append(node)
        elif isinstance(node, cst.FunctionDef):
            self.functions.append(node)
        elif isinstance(node, cst.ClassDef):
            self.classes.append(node)
        elif isinstance(node, cst.With):
            self.withs.append(node)
        elif isinstance(node, cst.Import):
            self.imports.append(node)
            self._record_import(node)
        elif isinstance(node, cst.ImportFrom):
            self.import_froms.append(node)

    def _record_assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._record_target(target.target, node.value)

    def _record_target(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self.assigned[id(target)] = value
            self.bindings.setdefault(target.value, []).append(value)
        elif isinstance(target, cst.Attribute):
            self.attribute_assigns.append((target, value))

    def _record_import(self, node: cst.Import) -> None:
        for alias in node.names:
            if alias.asname is None:
                root: cst.BaseExpression = alias.name
                while isinstance(root, cst.Attribute):  # `import torch.nn` binds `torch`
                    root = root.value
                if isinstance(root, cst.Name) and root.value == "torch":
                    self.torch_aliases.append("torch")
            elif isinstance(alias.name, cst.Name) and alias.name.value == "torch":
                if isinstance(alias.asname.name, cst.Name):
                    self.torch_aliases.append(alias.asname.name.value)
