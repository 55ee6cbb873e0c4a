"""Run the rules on an observation, each one isolated: a rule that raises on an unseen program
costs its own findings and adds a note ("rule D123 failed: ..."), never the whole report.

Tests and CI set TORCHDOCTOR_STRICT_RULES=1 (tests/diagnose/conftest.py does), which lets a
rule's exception propagate, so rule bugs fail loudly there instead of hiding in a note.
"""

from __future__ import annotations

import os

from torchdoctor.diagnose.findings import Finding, rank
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import epoch_seconds, training_share

STRICT_ENV = "TORCHDOCTOR_STRICT_RULES"


def strict() -> bool:
    return os.environ.get(STRICT_ENV, "") not in ("", "0")


def _failure(exc: Exception) -> str:
    message = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {message[0]}" if message else type(exc).__name__


def load_rules() -> list:
    from torchdoctor.diagnose.rules import all_rules  # a rule module that fails to import: a note

    return all_rules()


def check_all(run: RunObservation) -> list[Finding]:
    """Every rule's findings, ranked; a failing rule becomes a note in `run.notes`."""
    try:
        rules = load_rules()
    except Exception as exc:
        if strict():
            raise
        run.notes.append(f"the rules could not be loaded ({_failure(exc)}): no findings")
        return []
    if run.child_processes and not run.steps:
        return []  # training ran in child processes: the parent's few forwards say nothing
    findings: list[Finding] = []
    for rule in rules:
        try:
            found = rule.check(run)
            if getattr(rule, "SAVING_OF", "step") == "step":
                _step_share_to_run_share(run, found)
            findings.extend(found)
        except Exception as exc:
            if strict():
                raise
            code = getattr(rule, "CODE", getattr(rule, "__name__", "?"))
            run.notes.append(f"rule {code} failed ({_failure(exc)}): its findings are missing")
    epoch_s = epoch_seconds(run)
    if epoch_s is not None:
        for finding in findings:
            finding.seconds_per_epoch = finding.saving * epoch_s
    return rank(findings)


def _step_share_to_run_share(run: RunObservation, findings: list[Finding]) -> None:
    """Most rules compute their saving as a share of a training step; the report states it as
    a share of the run (steps plus evaluation), so a per-step fix and an evaluation fix compete
    on the same scale. Rules that already use the run set `SAVING_OF = "run"`."""
    share = training_share(run)
    for finding in findings:
        finding.saving *= share
