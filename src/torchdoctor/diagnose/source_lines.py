"""Read the user's source around a `file:line`: the call written there, the lines around it.

Pure Python (ast, linecache), no torch: the loader probe records the DataLoader call as written so
that fixes can rewrite it, and the report builder shows the lines around a finding's location.
"""

from __future__ import annotations

import ast
import linecache
import os
import re

LOCATION = re.compile(r"^(?P<file>.+):(?P<line>\d+)$")


def short_path(filename: str) -> str:
    """The file name as the user wrote it: relative to the working directory when inside it."""
    try:
        rel = os.path.relpath(filename)
    except ValueError:  # another drive (Windows)
        return filename
    return filename if rel.startswith("..") else rel


def split_location(location: str) -> tuple[str, int] | None:
    """("file", line) of a "file:line" location; None for "<unknown>" and the like."""
    match = LOCATION.match(location or "")
    if not match or match["file"].startswith("<"):
        return None
    return match["file"], int(match["line"])


def _callee_name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def call_at(filename: str, line: int, callee: str) -> str:
    """Source text of the innermost `callee(...)` call spanning `line` of `filename`; ""."""
    source = "".join(linecache.getlines(filename))
    if not source:
        return ""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return ""
    best: ast.Call | None = None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or _callee_name(node.func) != callee:
            continue
        end = node.end_lineno or node.lineno
        if node.lineno <= line <= end and (best is None or node.lineno >= best.lineno):
            best = node
    return (ast.get_source_segment(source, best) or "") if best is not None else ""


def lines_around(location: str, context: int = 3) -> list[tuple[int, str]]:
    """[(line number, text)] of the lines around a "file:line" location; [] when unreadable."""
    where = split_location(location)
    if where is None:
        return []
    filename, line = where
    lines = linecache.getlines(filename)
    if not lines or line > len(lines):
        return []
    first, last = max(1, line - context), min(len(lines), line + context)
    return [(number, lines[number - 1].rstrip("\n")) for number in range(first, last + 1)]
