"""`path:line:col: CODE message [*]` lines and a summary; `[*]` marks findings `--fix` repairs."""

from __future__ import annotations

from torchdoctor.lint.model import SAFE, UNSAFE


def _applies(violation, unsafe: bool) -> bool:
    return violation.fix is not None and (
        violation.fix.safety == SAFE or (unsafe and violation.fix.safety == UNSAFE)
    )


def render_text(result, unsafe: bool = False, quiet: bool = False) -> str:
    lines = []
    violations = sorted(result.violations, key=lambda v: v.sort_key())
    for v in violations:
        marker = " [*]" if _applies(v, unsafe) else ""
        lines.append(f"{v.path}:{v.line}:{v.column}: {v.code} {v.message}{marker}")
    if quiet:
        return "\n".join(lines) + ("\n" if lines else "")
    fixed = sum(f.fixes_applied for f in result.files)
    parts = []
    if fixed:
        parts.append(f"Fixed {fixed} finding{'s' * (fixed != 1)}.")
    if violations:
        parts.append(
            f"Found {len(violations)} finding{'s' * (len(violations) != 1)} "
            f"in {len({v.path for v in violations})} of {len(result.files)} files."
        )
        safe = sum(_applies(v, unsafe) for v in violations)
        hidden = (
            sum(v.fix is not None and v.fix.safety == UNSAFE for v in violations)
            if not unsafe
            else 0
        )
        if safe:
            parts.append(f"[*] {safe} fixable with `torchdoctor lint --fix`.")
        if hidden:
            parts.append(f"{hidden} more fixable with `--fix --unsafe-fixes`.")
    else:
        parts.append(f"All checks passed ({len(result.files)} files).")
    for note in result.notes:
        parts.append(f"note: {note}")
    if lines:
        lines.append("")
    lines.extend(parts)
    return "\n".join(lines) + "\n"
