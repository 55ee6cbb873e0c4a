"""Terminal report: breakdown bar, top findings with evidence and fix, the verdict line.

Colour and block characters on a TTY; on a pipe the bar uses one letter per phase so it still
reads in plain text. Nothing is computed here beyond laying out the builder's numbers.
"""

from __future__ import annotations

from rich.text import Text

from torchdoctor.console import make_console
from torchdoctor.diagnose.observations import PHASES
from torchdoctor.diagnose.report.lines_render import terminal_lines
from torchdoctor.diagnose.report.memory_render import memory_lines
from torchdoctor.diagnose.report.model import Report, saving_words

BAR_WIDTH = 50
TOP_FINDINGS = 5
STYLE = {
    "data": "red",
    "h2d": "magenta",
    "forward": "green",
    "backward": "blue",
    "optimizer": "cyan",
    "other": "yellow",
}
LETTER = {"data": "D", "h2d": "H", "forward": "F", "backward": "B", "optimizer": "O", "other": "."}


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{1000 * seconds:.1f} ms"


def breakdown_bar(report: Report, colour: bool) -> Text:
    text = Text()
    used = 0
    for index, phase in enumerate(PHASES):
        share = report.breakdown.get(phase, 0.0)
        cells = round(share * BAR_WIDTH) if index < len(PHASES) - 1 else BAR_WIDTH - used
        cells = max(0, min(cells, BAR_WIDTH - used))
        used += cells
        glyph = "█" if colour else LETTER[phase]
        text.append(glyph * cells, style=STYLE[phase] if colour else "")
    return text


def legend(report: Report, colour: bool) -> Text:
    """What each colour (TTY) or letter (plain text) of the bar means, with its share and time."""
    text = Text()
    for phase in PHASES:
        if text:
            text.append("  ")
        if colour:
            text.append("█", style=STYLE[phase])
        else:
            text.append(f"{LETTER[phase]}=")
        text.append(
            f"{phase} {100 * report.breakdown.get(phase, 0.0):.0f}% "
            f"({_ms(report.phase_seconds.get(phase))})"
        )
    return text


def _header(report: Report) -> str:
    run = report.run
    line = f"torchdoctor diagnose {run.target}: {run.status}"
    if run.warmup_only:
        line += f", {len(run.steps)} warm-up steps only"
    elif run.steps:
        line += f", {len(run.steps)} measured steps"
    if report.step_time_s is not None:
        line += f", step {_ms(report.step_time_s)} (median)"
    if report.samples_per_s:
        line += f", {report.samples_per_s:.0f} samples/s"
    return line


def render_terminal(report: Report, console=None) -> None:
    console = console or make_console()
    colour = console.is_terminal and not console.no_color
    console.print(_header(report), style="bold" if colour else "", markup=False)
    if report.breakdown:
        console.print(Text("[") + breakdown_bar(report, colour) + Text("]"))
        console.print(legend(report, colour))
    for note in report.step_notes:
        console.print(f"note: {note}", markup=False)
    for line in memory_lines(report.memory):
        console.print(line, markup=False, highlight=False)
    rows = report.finding_lines if len(report.finding_lines) == len(report.findings) else None
    for number, finding in enumerate(report.findings[:TOP_FINDINGS], start=1):
        console.print()
        console.print(
            f"{number}. {finding.id} [{finding.severity}] {finding.title}"
            f" ({saving_words(finding)})",
            style="bold" if colour else "",
            markup=False,
        )
        for evidence in finding.evidence:
            console.print(f"   - {evidence}", markup=False)
        if rows:
            terminal_lines(console, rows[number - 1], "   ", colour)
        console.print("   fix:", markup=False)
        for line in finding.fix.splitlines():  # never wrapped: it must paste as it reads
            console.print(
                f"       {line}", style="cyan" if colour else "", markup=False, soft_wrap=True
            )
    if len(report.findings) > TOP_FINDINGS:
        console.print(f"\n... and {len(report.findings) - TOP_FINDINGS} more (see --json/--html)")
    if report.run.notes:
        console.print()
        for note in report.run.notes:
            console.print(f"note: {note}", markup=False)
    console.print()
    console.print(f"verdict: {report.verdict}", style="bold" if colour else "", markup=False)
    terminal_lines(console, report.verdict_lines, "  ", colour)


def render_verdict(report: Report, console=None) -> None:
    """`--quiet`: the verdict line only."""
    console = console or make_console()
    console.print(f"verdict: {report.verdict}", markup=False, highlight=False)
