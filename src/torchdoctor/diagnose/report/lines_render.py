"""Laying out the line profile's rows (report/lines.py) in the terminal and in HTML: under each
finding and under the verdict, the top lines of the program's own code with their share; in HTML
with the source lines around them. Nothing is computed here."""

from __future__ import annotations

from html import escape

from torchdoctor.diagnose.report.lines import LineRow


def line_label(row: LineRow) -> str:
    return f"{100 * row.share:.0f}% {row.location} [{row.phase}] {row.code}"


def terminal_lines(console, rows: list[LineRow], indent: str, colour: bool) -> None:
    if not rows:
        return
    console.print(f"{indent}top lines:", markup=False)
    for row in rows:
        console.print(f"{indent}  {line_label(row)}", style="dim" if colour else "", markup=False)


def html_lines(rows: list[LineRow]) -> str:
    """A list of the lines, each with its source context (the line itself in bold)."""
    if not rows:
        return ""
    items = []
    for row in rows:
        number = row.location.rpartition(":")[2]
        context = "\n".join(
            f"<b>{escape(text)}</b>" if text.split(":", 1)[0] == number else escape(text)
            for text in row.context
        )
        items.append(
            f"<li>{100 * row.share:.0f}% <code>{escape(row.location)}</code> "
            f"[{escape(row.phase)}] in {escape(row.function)}<pre>{context}</pre></li>"
        )
    return f'<div class="lines"><small>top lines</small><ul>{"".join(items)}</ul></div>'
