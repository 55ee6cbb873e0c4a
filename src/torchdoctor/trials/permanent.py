"""The code change that makes the measured-and-kept fixes permanent.

Where torchdoctor's lint has an autofix for a fix (e.g. TD102 adds DataLoader workers), the
change is a unified diff of the user's script produced by `torchdoctor.lint.engine.lint_source`
restricted to those rules; every other kept fix is given as its code snippet (`PERMANENT`).
"""

from __future__ import annotations

import difflib
from pathlib import Path

from torchdoctor.program import Program
from torchdoctor.techniques import lint_codes_for_fix
from torchdoctor.trials.fixes import FIX_NAMES, get_fix

# fix name -> lint rule codes whose autofix makes the same change in the source
LINT_CODES = {name: lint_codes_for_fix(name) for name in FIX_NAMES}


def lint_diff(script: str, fixes: list[str]) -> tuple[str, set[str]]:
    """A unified diff of `script` with the lint autofixes for `fixes`; and the fixes it covers."""
    codes = {code for name in fixes for code in LINT_CODES.get(name, ())}
    if not codes or not Path(script).is_file():
        return "", set()
    try:
        from torchdoctor.lint.engine import lint_source
        from torchdoctor.lint.rules import all_rules
    except ImportError:  # lint not installed in this build: snippets only
        return "", set()
    source = Path(script).read_text(encoding="utf-8")
    rules = [rule for rule in all_rules() if rule.code in codes]
    result = lint_source(source, script, rules, fix=True, unsafe=True)
    if not result.changed:
        return "", set()
    fixed_codes = codes - {v.code for v in result.violations}
    covered = {name for name in fixes if set(LINT_CODES.get(name, ())) & fixed_codes}
    diff = difflib.unified_diff(
        source.splitlines(keepends=True),
        result.fixed_source.splitlines(keepends=True),
        fromfile=f"a/{script}",
        tofile=f"b/{script}",
    )
    return "".join(diff), covered


def permanent_change(program: Program, kept: list[str]) -> tuple[str, str]:
    """(text, kind): kind "diff" when a diff covers at least one fix, else "snippets"."""
    if not kept:
        return "", "snippets"
    diff, covered = ("", set()) if program.module else lint_diff(program.target, kept)
    snippets = [
        f"# {name}: {get_fix(name).SUMMARY}\n{get_fix(name).PERMANENT}"
        for name in kept
        if name not in covered
    ]
    parts = [diff.rstrip("\n")] if diff else []
    parts += snippets
    return "\n\n".join(parts) + "\n", "diff" if diff else "snippets"
