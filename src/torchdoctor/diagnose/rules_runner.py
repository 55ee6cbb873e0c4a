"""Run the rules on an observation, each one isolated: a rule that raises on an unseen program
costs its own findings and adds a note ("rule D123 failed: ..."), never the whole report.

Tests and CI set TORCHDOCTOR_STRICT_RULES=1 (tests/diagnose/conftest.py does), which lets a
rule's exception propagate, so rule bugs fail loudly there instead of hiding in a note.
The rules package (engineer C2's) is imported defensively only while it does not exist yet.
"""

from __future__ import annotations

import importlib
import os

from torchdoctor.diagnose.findings import Finding, rank
from torchdoctor.diagnose.observations import RunObservation

RULES_PACKAGE = "torchdoctor.diagnose.rules"
STRICT_ENV = "TORCHDOCTOR_STRICT_RULES"


def strict() -> bool:
    return os.environ.get(STRICT_ENV, "") not in ("", "0")


def _failure(exc: Exception) -> str:
    message = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {message[0]}" if message else type(exc).__name__


def load_rules() -> list:
    try:
        package = importlib.import_module(RULES_PACKAGE)
    except ModuleNotFoundError as exc:
        if exc.name == RULES_PACKAGE:
            return []
        raise
    return list(package.all_rules())


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
            findings.extend(rule.check(run))
        except Exception as exc:
            if strict():
                raise
            code = getattr(rule, "CODE", getattr(rule, "__name__", "?"))
            run.notes.append(f"rule {code} failed ({_failure(exc)}): its findings are missing")
    return rank(findings)
