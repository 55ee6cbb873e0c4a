"""The Report: what every renderer shows, computed once by the builder."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.report import prose
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

    @property
    def verdict(self) -> str:
        """One line."""
        return prose.verdict_text(self.reason)

    @property
    def step_notes(self) -> list[str]:
        """Step-time spread: outliers left out, or why all steps count."""
        return [prose.spread_note(self.spread)] if self.spread else []

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
            "findings": [finding.to_dict() for finding in self.findings],
            "run": self.run.to_dict(),
        }
