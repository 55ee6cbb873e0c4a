"""What a rule returns. Rules are pure: `check(run: RunObservation) -> list[Finding]`."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal

Severity = Literal["error", "warning", "info"]
# "measured": timed on the user's own program (a what-if probe, a --try trial, a measured phase
# that the fix removes); "estimated": a model of the fix (Amdahl over measured phases, a table);
# "not measured": no number stands (the copy's timings undecided, the probe not run, and no
# model of the fix): `saving` is 0 and renderers say "not measured", never "0%" (D212 whose
# pairs disagreed read "saves 0%"; the calibration bench counted it as a stated 0%).
SavingBasis = Literal["measured", "estimated", "not measured"]
SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


@dataclass
class Finding:
    id: str  # stable rule code, e.g. "D101"
    title: str  # one line, e.g. "DataLoader runs in the main process"
    severity: Severity
    # share of the run's wall time (training steps plus evaluation) the fix would save, 0..1;
    # rules compute it per training step and the rules runner scales it to the whole run
    saving: float
    evidence: list[str]  # measured numbers, each a short sentence
    fix: str  # the change, as code
    # pages the user has: "docs/techniques/data-loading.md; PyTorch docs: torch.utils.data"
    source: str
    explanation: str = ""  # why this matters, two sentences at most
    changes_semantics: bool = False  # True: a suggestion (batch size, lr), never auto-applied
    details: dict = field(default_factory=dict)  # machine-readable numbers behind the evidence
    saving_basis: SavingBasis = "estimated"  # how `saving` was obtained (renderers say which)
    saving_how: str = ""  # one line: what was timed, or what the estimate assumes
    # the saving in seconds per epoch of the program's training loop, where the epoch is known
    seconds_per_epoch: float | None = None

    def saving_summary(self) -> dict:
        """The JSON `saving` object (report schema "2")."""
        return {
            "fraction": self.saving,
            "seconds_per_epoch": self.seconds_per_epoch,
            "basis": self.saving_basis,
            "how": self.saving_how,
        }

    def to_dict(self) -> dict:
        return asdict(self)


# An estimate outranks a measured saving only when it is this many times larger: the calibration
# target (issue 9) holds measured savings within 1.5x of what --try finds, and an estimate is a
# model of the fix that nothing on this run has checked (bench/calibration.py: estimates were off
# by up to 7x). The reported savings themselves are left as they are.
ESTIMATE_DISCOUNT = 1.5


def ranking_weight(finding: Finding) -> float:
    """The saving the order uses: measured as is, an estimate divided by ESTIMATE_DISCOUNT."""
    if finding.saving_basis == "measured":
        return finding.saving
    return finding.saving / ESTIMATE_DISCOUNT


def _order(f: Finding) -> tuple:
    return (
        f.severity != "error",
        -round(ranking_weight(f), 3),
        f.saving_basis != "measured",
        SEVERITY_ORDER[f.severity],
        f.id,
    )


def rank(findings: list[Finding]) -> list[Finding]:
    """Correctness errors first (a wrong result outranks any speed-up), then the largest saving,
    an estimate counting 1/ESTIMATE_DISCOUNT of its size (a measured saving beats an estimate of
    similar size); a measured saving before an estimated one of the same weight, then severity
    and the code break ties, for a stable order. A suggestion that changes what the model learns
    (an info finding with `changes_semantics`: a larger batch, D202) never ranks above a warning
    or an error: it is a modelling choice, they are problems; among the other information it
    takes its place by saving."""
    ordered = sorted(findings, key=_order)
    choices = [f for f in ordered if f.changes_semantics and f.severity == "info"]
    rest = [f for f in ordered if not (f.changes_semantics and f.severity == "info")]
    problems = max((i + 1 for i, f in enumerate(rest) if f.severity != "info"), default=0)
    return rest[:problems] + sorted(rest[problems:] + choices, key=_order)
