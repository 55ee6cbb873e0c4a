"""The line profile's part of the report: top user lines per phase (the JSON `lines` section),
the lines shown under each finding and under the verdict. Computed here, laid out by renderers.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import LineStat, RunObservation
from torchdoctor.diagnose.step_analysis import evaluation_is_acting

TOP_LINES = 5  # per phase in the JSON section
SHOWN = 3  # under a finding or the verdict
MIN_SHOWN_SHARE = 0.02  # lines below this share of the step are not worth a reader's attention
# Which phases a finding is about, by code prefix: its lines are the top ones of those phases
# (a finding that names its own lines, `details["location"]`/`["locations"]`, shows those)
PHASES_BY_CODE = {
    "D1": ("data",),
    "D2": ("forward", "backward", "optimizer"),
    "D3": ("evaluation",),
    "D4": ("other",),
    "D6": ("backward",),
    "D7": ("other",),
    "D8": ("other", "evaluation"),
}
# the verdict's dominant phase -> the line profile's phases
VERDICT_PHASES = {
    "data": ("data",),
    "h2d": ("h2d",),
    "other": ("other",),
    "forward": ("forward", "backward", "optimizer"),
    "backward": ("forward", "backward", "optimizer"),
    "optimizer": ("forward", "backward", "optimizer"),
}


@dataclass
class LineRow:
    """One line as the report shows it."""

    location: str
    # the line profile's phase; "acting" for an RL loop's acting forwards (the profile's
    # "evaluation": forwards without gradient), which are part of its training
    phase: str
    share: float  # of the mean step (self time: the line itself and the library code it called)
    samples: int
    code: str
    function: str = ""
    context: list[str] = field(default_factory=list)
    chain: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def _row(line: LineStat, acting: bool) -> LineRow:
    return LineRow(
        line.location,
        "acting" if acting and line.phase == "evaluation" else line.phase,
        line.self_share,
        line.self_samples,
        line.code,
        line.function,
        list(line.context),
        list(line.chain),
    )


def _rows(run: RunObservation, lines: list[LineStat]) -> list[LineRow]:
    """The rows shown for these lines; whether the profile's "evaluation" is an RL loop's acting
    is decided once, and only where there is a line to show."""
    acting = bool(lines) and evaluation_is_acting(run)
    return [_row(line, acting) for line in lines]


def _top(run: RunObservation, phases: tuple[str, ...], count: int) -> list[LineStat]:
    lines = [ln for ln in run.lines.lines if ln.phase in phases and ln.self_samples > 0]
    lines.sort(key=lambda ln: -ln.self_share)
    return [ln for ln in lines[:count] if ln.self_share >= MIN_SHOWN_SHARE]


def lines_section(run: RunObservation) -> dict:
    """The JSON `lines` section: per phase, the top user lines by their own time."""
    profile = run.lines
    phases = sorted({line.phase for line in profile.lines})
    return {
        "interval_s": profile.interval_s,
        "samples": profile.samples,
        "seconds_per_sample": profile.seconds_per_sample,
        "phase_samples": dict(profile.phase_samples),
        "phase_seconds": dict(profile.phase_seconds),
        "phases": {
            phase: [
                {
                    "location": line.location,
                    "function": line.function,
                    "code": line.code,
                    "share": line.self_share,
                    "samples": line.self_samples,
                }
                for line in _top(run, (phase,), TOP_LINES)
            ]
            for phase in phases
        },
    }


def finding_lines(run: RunObservation, finding: Finding) -> list[LineRow]:
    """The lines to show under a finding: the ones it names, else the top ones of its phases."""
    named = finding.details.get("locations") or [finding.details.get("location")]
    own = [ln for ln in run.lines.lines if ln.location in named and ln.self_samples]
    if own:
        return _rows(run, sorted(own, key=lambda ln: -ln.self_share)[:SHOWN])
    phases = PHASES_BY_CODE.get(finding.id[:2])
    return _rows(run, _top(run, phases, SHOWN)) if phases else []


def verdict_lines(run: RunObservation, dominant: str | None) -> list[LineRow]:
    """The top lines of the dominant phase (none when no step was measured)."""
    phases = VERDICT_PHASES.get(dominant or "")
    return _rows(run, _top(run, phases, SHOWN)) if phases else []
