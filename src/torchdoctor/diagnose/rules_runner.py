"""Run the rules on an observation. The rules package (engineer C2's) is imported defensively only
while it does not exist yet; once it exists, its errors propagate like any other bug."""

from __future__ import annotations

import importlib

from torchdoctor.diagnose.findings import Finding, rank
from torchdoctor.diagnose.observations import RunObservation

RULES_PACKAGE = "torchdoctor.diagnose.rules"


def load_rules() -> list:
    try:
        package = importlib.import_module(RULES_PACKAGE)
    except ModuleNotFoundError as exc:
        if exc.name == RULES_PACKAGE:
            return []
        raise
    return list(package.all_rules())


def check_all(run: RunObservation) -> list[Finding]:
    findings: list[Finding] = []
    for rule in load_rules():
        findings.extend(rule.check(run))
    return rank(findings)
