"""The Report: what every renderer shows, computed once by the builder."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.report import prose
from torchdoctor.diagnose.report.lines import LineRow, lines_section
from torchdoctor.diagnose.report.memory_view import MemoryView
from torchdoctor.diagnose.report.verdict import Verdict
from torchdoctor.diagnose.step_analysis import StepSpread

SCHEMA_VERSION = "2"


@dataclass
class Report:
    run: RunObservation
    breakdown: dict[str, float]  # phase -> share of measured step time (sums to 1 when steps)
    findings: list[Finding]  # ranked: largest estimated saving first
    reason: Verdict  # what the verdict says, as data; `verdict` words it
    step_time_s: float | None = None  # median wall time of a measured step
    samples_per_s: float | None = None
    dominant_phase: str | None = None
    schema_version: str = SCHEMA_VERSION
    # seconds of the median step, by phase: breakdown share x step_time_s (they sum to it)
    phase_seconds: dict[str, float] = field(default_factory=dict)
    spread: StepSpread | None = None  # steps far slower than the median, and what was done
    memory: MemoryView | None = None  # per-phase memory, what is held, by module, over steps
    # "file:line" of a finding -> [(line number, text)] of the user's source around it (HTML)
    source_lines: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    # `--try`'s TrialReport as a dict, once the trials ran (HTML; the JSON gets its own section)
    trials: dict | None = None
    # the line profile: the top user lines under each finding (same order) and under the verdict
    finding_lines: list[list[LineRow]] = field(default_factory=list)
    verdict_lines: list[LineRow] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        """One line."""
        return prose.verdict_text(self.reason)

    @property
    def step_notes(self) -> list[str]:
        """Step-time spread: outliers left out, or why all steps count."""
        return [prose.spread_note(self.spread)] if self.spread else []

    def __str__(self) -> str:
        """`print(report)`: the terminal report as plain text (a notebook, a log)."""
        import io

        from rich.console import Console

        from torchdoctor.diagnose.report.terminal import render_terminal

        out = io.StringIO()
        plain = Console(file=out, width=100, no_color=True, highlight=False, soft_wrap=True)
        render_terminal(self, plain)  # soft wrap: lines as long as they are, like a pipe
        return out.getvalue()

    def _repr_html_(self) -> str:
        """Jupyter renders the report inline (the HTML report's body, its styles scoped)."""
        from torchdoctor.diagnose.report.html import render_fragment

        return render_fragment(self)

    def to_dict(self) -> dict:
        return {
            "schema_version": self.schema_version,
            "verdict": self.verdict,
            "verdict_reason": asdict(self.reason),
            "status": self.run.status,
            "exit_code": self.run.exit_code,
            "steps": 0 if self.run.warmup_only else len(self.run.steps),  # measured ones
            "step_time_s": self.step_time_s,
            "samples_per_s": self.samples_per_s,
            "dominant_phase": self.dominant_phase,
            "breakdown": dict(self.breakdown),
            "phase_seconds": dict(self.phase_seconds),
            "step_notes": list(self.step_notes),
            "step_spread": asdict(self.spread) if self.spread else None,
            "findings": [
                {**_finding_dict(finding), "lines": [row.to_dict() for row in rows]}
                for finding, rows in zip(self.findings, self._lines_per_finding(), strict=True)
            ],
            "verdict_lines": [row.to_dict() for row in self.verdict_lines],
            "lines": lines_section(self.run),
            "memory": self.memory.to_dict() if self.memory is not None else None,
            "run": self.run.to_dict(),
        }

    def _lines_per_finding(self) -> list[list[LineRow]]:
        if len(self.finding_lines) == len(self.findings):
            return self.finding_lines
        return [[] for _ in self.findings]


SAVING_PARTS = ("saving_basis", "saving_how", "seconds_per_epoch")


def _finding_dict(finding: Finding) -> dict:
    """Schema "2": `saving` is an object {fraction, seconds_per_epoch, basis, how}."""
    data = {k: v for k, v in finding.to_dict().items() if k not in SAVING_PARTS}
    data["saving"] = finding.saving_summary()
    return data


# a saving below this rounds to 0%: no saving to list, nor a top fix to name
LEAST_SAVING = 0.005


def saving_words(finding: Finding) -> str:
    """'saves ~12% of run time, measured' / '..., estimate': every renderer says which. A saving
    that rounds to 0% is not listed as one: 'saves ~0% of run time' reads as a speed fix that
    does nothing, where the finding is about something else (a sync that will cost on a GPU,
    memory, a habit) or its gain here is below what one run measures."""
    if finding.saving_basis == "not measured":
        return "time saving not measured on this run"
    basis = "measured" if finding.saving_basis == "measured" else "estimate"
    if finding.saving < LEAST_SAVING:
        return (
            "no time saving measured on this run"
            if basis == "measured"
            else "no time saving claimed"
        )
    words = f"saves ~{100 * finding.saving:.0f}% of run time"
    seconds = finding.seconds_per_epoch
    if seconds is not None and seconds >= 0.05:
        words += f", {seconds:.1f} s per epoch"
    return f"{words}, {basis}"
