"""GitHub Actions workflow commands: one `::warning` / `::error` annotation per finding."""

from __future__ import annotations

from torchdoctor.lint.formats.sarif import rule_levels


def _escape(text: str, property_value: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if property_value:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


# Rule levels -> GitHub workflow commands.
_COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def render_github(result) -> str:
    levels = rule_levels()
    lines = []
    for v in sorted(result.violations, key=lambda v: v.sort_key()):
        command = _COMMANDS[levels.get(v.code, "warning")]
        lines.append(
            f"::{command} file={_escape(v.path, True)},line={v.line},col={v.column},"
            f"endLine={v.end_line},endColumn={v.end_column},"
            f"title={_escape(v.code, True)}::{_escape(f'{v.code} {v.message}')}"
        )
    return "\n".join(lines) + ("\n" if lines else "")
