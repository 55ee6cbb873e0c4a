"""One pass over a module that records what every rule asks about.

Rules query these lists instead of walking the tree again, so a file costs one parse, one
metadata resolution and one traversal however many rules are enabled.
"""

from __future__ import annotations

import libcst as cst


class NodeIndex(cst.CSTVisitor):
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
        self.torch_aliases: list[str] = []  # names bound to the `torch` module itself
        self._stack: list[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self._stack:
            parent = self._stack[-1]
            self.parents[id(node)] = parent
            self.children[id(parent)].append(node)
        self.children[id(node)] = []
        self._stack.append(node)
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
            self._record_import(node)
        elif isinstance(node, cst.ImportFrom):
            self.import_froms.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self._stack.pop()

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
