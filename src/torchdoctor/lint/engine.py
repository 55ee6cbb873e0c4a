"""Lint one source text: parse once, resolve metadata once, run every selected rule, filter
by suppressions, and (optionally) apply fixes round by round until nothing more changes."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from torchdoctor.lint.context import FileContext
from torchdoctor.lint.fixes import apply_fixes, non_overlapping
from torchdoctor.lint.model import SAFE, Violation
from torchdoctor.lint.suppression import parse_suppressions

SYNTAX_ERROR_CODE = "TD000"
SYNTAX_ERROR_NAME = "syntax-error"
MAX_FIX_ROUNDS = 10


@dataclass
class FileResult:
    path: str
    source: str
    violations: list[Violation] = field(default_factory=list)
    fixed_source: str | None = None  # set when fixes changed the text
    fixes_applied: int = 0

    @property
    def changed(self) -> bool:
        return self.fixed_source is not None and self.fixed_source != self.source


def _syntax_error(path: str, source: str, exc: Exception) -> Violation:
    line = getattr(exc, "raw_line", None) or getattr(exc, "lineno", None) or 1
    column = (getattr(exc, "raw_column", None) or 0) + 1
    message = getattr(exc, "message", None) or str(exc).splitlines()[0]
    lines = source.splitlines()
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return Violation(SYNTAX_ERROR_CODE, SYNTAX_ERROR_NAME, f"SyntaxError: {message}",
                     line, column, line, column, None, path, text)


def check_source(source: str, path: str, rules) -> tuple[list[Violation], cst.Module | None]:
    """Violations of `rules` (noqa applied), and the parsed module (None on a syntax error)."""
    try:
        module = cst.parse_module(source)
    except (cst.ParserSyntaxError, SyntaxError, ValueError) as exc:
        return [_syntax_error(path, source, exc)], None
    ctx = FileContext(path, source, module)
    found: list[Violation] = []
    for rule in rules:
        found.extend(rule.check(ctx))
    suppressions = parse_suppressions(source)
    kept = [v for v in found if not suppressions.suppresses(v)]
    kept.sort(key=Violation.sort_key)
    return kept, module


def lint_source(source: str, path: str, rules, fix: bool = False, unsafe: bool = False) -> FileResult:
    result = FileResult(path, source)
    current = source
    violations, module = check_source(current, path, rules)
    if fix and module is not None:
        allowed = {SAFE, "unsafe"} if unsafe else {SAFE}
        for _ in range(MAX_FIX_ROUNDS):
            fixes = [v.fix for v in violations if v.fix is not None and v.fix.safety in allowed]
            chosen = non_overlapping(fixes)
            if not chosen:
                break
            new_source = apply_fixes(module, chosen)
            if new_source == current:
                break
            new_violations, new_module = check_source(new_source, path, rules)
            if new_module is None:  # a fix must never break a file: keep the last good text
                break
            result.fixes_applied += len(chosen)
            current, violations, module = new_source, new_violations, new_module
        if current != source:
            result.fixed_source = current
    result.violations = violations
    return result
