"""The Report: what every renderer shows, computed once by the builder."""

from __future__ import annotations

from dataclasses import dataclass, field

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation

SCHEMA_VERSION = "2"


@dataclass
class Report:
    run: RunObservation
    breakdown: dict[str, float]  # phase -> share of measured step time (sums to 1 when steps)
    findings: list[Finding]  # ranked: largest estimated saving first
    verdict: str  # one line
    step_time_s: float | None = None  # median wall time of a measured step
    samples_per_s: float | None = None
    dominant_phase: str | None = None
    schema_version: str = SCHEMA_VERSION
    # seconds of the median step, by phase: breakdown share x step_time_s (they sum to it)
    phase_seconds: dict[str, float] = field(default_factory=dict)
    step_notes: list[str] = field(default_factory=list)  # step-time spread, outliers left out

    def to_dict(self) -> dict:
        return {
            "schema_version": self.schema_version,
            "verdict": self.verdict,
            "status": self.run.status,
            "exit_code": self.run.exit_code,
            "steps": 0 if self.run.warmup_only else len(self.run.steps),  # measured ones
            "step_time_s": self.step_time_s,
            "samples_per_s": self.samples_per_s,
            "dominant_phase": self.dominant_phase,
            "breakdown": dict(self.breakdown),
            "phase_seconds": dict(self.phase_seconds),
            "step_notes": list(self.step_notes),
            "findings": [finding.to_dict() for finding in self.findings],
            "run": self.run.to_dict(),
        }
