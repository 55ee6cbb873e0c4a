"""Everything a rule may ask about one file: resolved names, scopes, positions, parents.

Names are resolved through imports and aliases (`import torch as T`, `from torch import nn`,
`from torch.utils.data import DataLoader as DL`) with libcst's ScopeProvider (the qualified
names QualifiedNameProvider would give, computed per name on demand), never by spelling; a
name that is not imported from torch is not torch.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider, QualifiedNameSource, ScopeProvider

from torchdoctor.lint.index import NodeIndex, recorded_traversal
from torchdoctor.lint.model import Fix, Violation

# Public re-exports of the same object under another module path -> the documented spelling.
_CANONICAL_PREFIXES = (
    ("torch.utils.data.dataloader.", "torch.utils.data."),
    ("torch.nn.parallel.data_parallel.", "torch.nn."),
    ("torch.nn.parallel.DataParallel", "torch.nn.DataParallel"),
    ("torch.nn.parallel.distributed.", "torch.nn.parallel."),
    ("torch.nn.DistributedDataParallel", "torch.nn.parallel.DistributedDataParallel"),
    ("torch.nn.utils.clip_grad.", "torch.nn.utils."),
    ("torch.nn.modules.batchnorm.", "torch.nn."),
    ("torch.nn.modules.conv.", "torch.nn."),
    ("torch.nn.modules.module.", "torch.nn."),
    ("torch.cuda.amp.autocast_mode.", "torch.cuda.amp."),
    ("torch.cuda.amp.grad_scaler.", "torch.cuda.amp."),
    ("torch.autograd.grad_mode.", "torch."),
    ("torch.serialization.load", "torch.load"),
)


def canonical(name: str) -> str:
    for prefix, replacement in _CANONICAL_PREFIXES:
        if name.startswith(prefix):
            return replacement + name[len(prefix) :]
    return name


class FileContext:
    def __init__(self, path: str, source: str, module: cst.Module):
        self.path = path
        self.source = source
        self.module = module
        self.lines = source.splitlines()
        # Scopes are resolved for every file; positions (a full code-generation pass) only when
        # something asks, and qualified names per node on demand (what QualifiedNameProvider
        # computes, without its whole-tree pass).
        # The index's walk comes first: scope resolution then follows its recorded children
        # instead of libcst's rebuilding `visit`.
        self.index = NodeIndex().build(module)
        self._wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        with recorded_traversal(self.index.children):
            self._scopes = self._wrapper.resolve(ScopeProvider)
        self._position_map = None
        self._qualified: dict[int, set] = {}
        # what a helper computes once per file for many questions (e.g. every setting's defaults)
        self.memo: dict[str, object] = {}

    # --- names -----------------------------------------------------------------------------
    def _raw_qualified_names(self, node: cst.CSTNode) -> set:
        key = id(node)
        if key not in self._qualified:
            scope = self._scopes.get(node)
            self._qualified[key] = (
                set(scope.get_qualified_names_for(node)) if scope is not None else set()
            )
        return self._qualified[key]

    def qualified_names(self, node: cst.CSTNode) -> set[str]:
        return {canonical(q.name) for q in self._raw_qualified_names(node)}

    def qualified_name(self, node: cst.CSTNode) -> str | None:
        """The import-resolved name of an expression, e.g. "torch.tensor"; None when unknown."""
        names = self.qualified_names(node)
        return min(names) if names else None

    def is_imported(self, node: cst.CSTNode) -> bool:
        """`node` names something from an import (`torch.log`), not a method on a value."""
        return any(q.source is QualifiedNameSource.IMPORT for q in self._raw_qualified_names(node))

    def call_name(self, call: cst.Call) -> str | None:
        return self.qualified_name(call.func)

    def calls_to(self, *names: str) -> Iterator[cst.Call]:
        wanted = set(names)
        for call in self.index.calls:
            if self.qualified_names(call.func) & wanted:
                yield call

    # --- scopes and data flow --------------------------------------------------------------
    def scope(self, node: cst.CSTNode):
        return self._scopes.get(node)

    def assigned_values(self, name: cst.Name) -> list[cst.BaseExpression] | None:
        """Every value bound to `name` in its scope when all bindings are plain assignments;
        None when any binding is something else (a parameter, a loop target, an import...)."""
        scope = self.scope(name)
        if scope is None:
            return None
        values = []
        for assignment in scope[name.value]:
            node = getattr(assignment, "node", None)
            value = self.index.assigned.get(id(node)) if node is not None else None
            if value is None:
                return None
            values.append(value)
        return values or None

    def single_value(self, name: cst.BaseExpression) -> cst.BaseExpression | None:
        if not isinstance(name, cst.Name):
            return None
        values = self.assigned_values(name)
        return values[0] if values and len(values) == 1 else None

    def accesses(self, name: str, scope) -> list:
        return list(scope.accesses[name]) if scope is not None else []

    # --- tree navigation -------------------------------------------------------------------
    def children(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        found = self.index.children.get(id(node))
        return found if found is not None else list(node.children)

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.index.parents.get(id(node))

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        current = self.parent(node)
        while current is not None:
            yield current
            current = self.parent(current)

    def enclosing(self, node: cst.CSTNode, kinds) -> cst.CSTNode | None:
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, kinds):
                return ancestor
        return None

    def is_inside(self, node: cst.CSTNode, container: cst.CSTNode) -> bool:
        return any(a is container for a in self.ancestors(node))

    def statement_of(self, node: cst.CSTNode) -> cst.CSTNode:
        """The statement (simple line or compound statement) that contains `node`."""
        for ancestor in [node, *self.ancestors(node)]:
            if isinstance(ancestor, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return ancestor
        return node

    # --- positions and reporting -----------------------------------------------------------
    @property
    def _positions(self):
        if self._position_map is None:
            self._position_map = self._wrapper.resolve(PositionProvider)
        return self._position_map

    def position(self, node: cst.CSTNode):
        return self._positions[node]

    def line(self, node: cst.CSTNode) -> int:
        return self._positions[node].start.line

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def make_fix(self, safety: str, description: str, replacements: dict) -> Fix:
        """`replacements`: original node -> new node (or FlattenSentinel / RemoveFromParent)."""
        starts, ends = [], []
        for original in replacements:
            pos = self._positions[original]
            starts.append((pos.start.line, pos.start.column))
            ends.append((pos.end.line, pos.end.column))
        span = (*min(starts), *max(ends))
        return Fix(safety, description, tuple(replacements.items()), span)

    def violation(self, rule, node: cst.CSTNode, message: str, fix: Fix | None = None) -> Violation:
        pos = self._positions[node]
        line_text = self.lines[pos.start.line - 1] if pos.start.line <= len(self.lines) else ""
        return Violation(
            code=rule.code,
            name=rule.name,
            message=message,
            line=pos.start.line,
            column=pos.start.column + 1,
            end_line=pos.end.line,
            end_column=pos.end.column + 1,
            fix=fix,
            path=self.path,
            line_text=line_text,
        )
