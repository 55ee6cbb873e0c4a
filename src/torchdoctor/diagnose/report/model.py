"""The Report: what every renderer shows, computed once by the builder."""

from __future__ import annotations

from dataclasses import dataclass, field

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation

SCHEMA_VERSION = "1"


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
    phase_seconds: dict[str, float] = field(default_factory=dict)  # mean seconds per step, by phase

    def to_dict(self) -> dict:
        return {
            "schema_version": self.schema_version,
            "verdict": self.verdict,
            "status": self.run.status,
            "exit_code": self.run.exit_code,
            "steps": len(self.run.steps),
            "step_time_s": self.step_time_s,
            "samples_per_s": self.samples_per_s,
            "dominant_phase": self.dominant_phase,
            "breakdown": dict(self.breakdown),
            "phase_seconds": dict(self.phase_seconds),
            "findings": [finding.to_dict() for finding in self.findings],
            "run": self.run.to_dict(),
        }
