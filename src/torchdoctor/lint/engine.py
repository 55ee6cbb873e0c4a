"""Lint one source text: parse once, resolve metadata once, run every selected rule, filter
by suppressions, and (optionally) apply fixes round by round until nothing more changes."""

from __future__ import annotations

import ast
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
    notes: list[str] = field(default_factory=list)  # rules that crashed on this file

    @property
    def changed(self) -> bool:
        return self.fixed_source is not None and self.fixed_source != self.source


def _syntax_error(
    path: str, source: str, exc: Exception, where: tuple[int, int, str] | None = None
) -> Violation:
    """`where`: (line, 0-based column, message) when `exc` does not carry libcst's fields."""
    line = getattr(exc, "raw_line", None) or getattr(exc, "lineno", None) or 1
    column = (getattr(exc, "raw_column", None) or 0) + 1
    message = getattr(exc, "message", None) or str(exc).splitlines()[0]
    if where is not None:
        line, column, message = where[0], where[1] + 1, where[2]
    lines = source.splitlines()
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return Violation(
        SYNTAX_ERROR_CODE,
        SYNTAX_ERROR_NAME,
        f"SyntaxError: {message}",
        line,
        column,
        line,
        column,
        None,
        path,
        text,
    )


# Every rule needs one of these words in the file to fire; a file without any of them is not
# PyTorch training code, so it is only compiled (fast, in C) to report syntax errors.
_RELEVANT_WORDS = ("torch", "backward", "zero_grad")


def _relevant(source: str) -> bool:
    return any(word in source for word in _RELEVANT_WORDS)


def _compile_check(source: str, path: str) -> list[Violation]:
    try:
        compile(source, path, "exec", ast.PyCF_ONLY_AST)
    except SyntaxError as exc:
        where = (exc.lineno or 1, max((exc.offset or 1) - 1, 0), exc.msg)
        return [_syntax_error(path, source, exc, where)]
    except ValueError as exc:  # null bytes
        return [_syntax_error(path, source, exc)]
    return []


def _run_rules(ctx: FileContext, rules, notes: list[str]) -> list[Violation]:
    found: list[Violation] = []
    for rule in rules:
        try:
            found.extend(rule.check(ctx))
        except Exception as exc:  # a bug in one rule must not stop the run or hide other findings
            notes.append(
                f"{ctx.path}: internal error in {rule.code}, skipped: {type(exc).__name__}: {exc}"
            )
    return found


def check_source(
    source: str, path: str, rules, notes: list[str] | None = None
) -> tuple[list[Violation], cst.Module | None]:
    """Violations of `rules` (noqa applied), and the parsed module (None on a syntax error or
    when the file is not PyTorch code)."""
    if not _relevant(source):
        return _compile_check(source, path), None
    try:
        module = cst.parse_module(source)
    except (cst.ParserSyntaxError, SyntaxError, ValueError) as exc:
        # CPython's message and position are the ones users know; libcst's only when CPython
        # accepts what libcst cannot parse (very new syntax)
        return _compile_check(source, path) or [_syntax_error(path, source, exc)], None
    notes = notes if notes is not None else []
    try:
        ctx = FileContext(path, source, module)
    except Exception as exc:  # libcst metadata can fail on exotic code: report, go on
        notes.append(f"{path}: could not analyse, skipped: {type(exc).__name__}: {exc}")
        return [], module
    found = _run_rules(ctx, rules, notes)
    suppressions = parse_suppressions(source)
    kept = [v for v in found if not suppressions.suppresses(v)]
    kept.sort(key=Violation.sort_key)
    return kept, module


def lint_source(
    source: str, path: str, rules, fix: bool = False, unsafe: bool = False
) -> FileResult:
    result = FileResult(path, source)
    current = source
    violations, module = check_source(current, path, rules, result.notes)
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
            new_violations, new_module = check_source(new_source, path, rules, result.notes)
            if new_module is None:  # a fix must never break a file: keep the last good text
                break
            result.fixes_applied += len(chosen)
            current, violations, module = new_source, new_violations, new_module
        if current != source:
            result.fixed_source = current
    result.violations = violations
    return result
