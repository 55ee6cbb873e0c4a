"""The data that flows out of the linter: violations and the fixes attached to them.

Rules produce `Violation`s; the engine filters them (selection, noqa), applies their `Fix`es and
hands the rest to a renderer. Nothing here knows about libcst visitors or output formats.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SAFE = "safe"
UNSAFE = "unsafe"
NO_FIX = "none"
FIX_SAFETIES = (SAFE, UNSAFE, NO_FIX)


@dataclass(frozen=True)
class Fix:
    """A libcst transformation: original nodes (by identity) -> replacement nodes.

    A replacement may be a node, a `libcst.FlattenSentinel` (to insert statements next to the
    original one) or `libcst.RemoveFromParent()`.
    """

    safety: str
    description: str
    replacements: tuple[tuple[Any, Any], ...]
    # (start_line, start_col, end_line, end_col) covering every replaced node: fixes whose spans
    # overlap are applied in separate rounds so one never rewrites the other's original.
    span: tuple[int, int, int, int] = (0, 0, 0, 0)


@dataclass
class Violation:
    code: str
    name: str
    message: str
    line: int  # 1-based
    column: int  # 1-based
    end_line: int
    end_column: int
    fix: Fix | None = None
    path: str = ""
    line_text: str = field(default="", compare=False)

    @property
    def fix_safety(self) -> str:
        return self.fix.safety if self.fix else NO_FIX

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column, self.code)
