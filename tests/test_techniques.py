"""The technique registry (torchdoctor.techniques) names every diagnose rule, lint rule and
`--try` fix, and every name in it is real: a new rule or fix that is not registered fails here."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from torchdoctor import techniques
from torchdoctor.demo.stack import NAIVE, STACK
from torchdoctor.diagnose.rules import all_rules as diagnose_rules
from torchdoctor.lint.rules import rule_classes
from torchdoctor.techniques import TECHNIQUES
from torchdoctor.trainer.config import TrainerConfig
from torchdoctor.trials.fixes import FIX_NAMES, all_fixes
from torchdoctor.trials.permanent import LINT_CODES

REPO = Path(__file__).resolve().parents[1]
REGISTER = (
    "add it to a Technique row in src/torchdoctor/techniques.py (diagnose=, lint= or fixes=), "
    "then run `make docs`"
)


def registered(column: str) -> set[str]:
    return {value for technique in TECHNIQUES for value in getattr(technique, column)}


def test_every_diagnose_rule_lint_rule_and_fix_is_registered():
    missing = {code for code in (rule.CODE for rule in diagnose_rules())} - registered("diagnose")
    assert not missing, f"diagnose rule(s) {sorted(missing)} not in the registry: {REGISTER}"
    missing = {cls.code for cls in rule_classes()} - registered("lint")
    assert not missing, f"lint rule(s) {sorted(missing)} not in the registry: {REGISTER}"
    missing = set(FIX_NAMES) - registered("fixes")
    assert not missing, f"--try fix(es) {sorted(missing)} not in the registry: {REGISTER}"


def test_every_name_in_the_registry_exists():
    assert len({t.key for t in TECHNIQUES}) == len(TECHNIQUES)
    assert registered("diagnose") <= {rule.CODE for rule in diagnose_rules()}
    assert registered("lint") <= {cls.code for cls in rule_classes()}
    assert registered("fixes") <= set(FIX_NAMES)
    assert registered("trainer") <= {f.name for f in dataclasses.fields(TrainerConfig)}
    assert {t.demo for t in TECHNIQUES if t.demo} <= {step.key for step in STACK}
    pages = {path.name for path in (REPO / "docs" / "techniques").glob("*.md")}
    assert {t.page for t in TECHNIQUES if t.page} == pages  # and no page left out


def test_a_page_names_the_codes_its_techniques_answer():
    """The hand-written pages stay true to the table: each names its findings and lint rules."""
    for technique in TECHNIQUES:
        if technique.page:
            text = (REPO / "docs" / "techniques" / technique.page).read_text(encoding="utf-8")
            absent = [c for c in technique.diagnose + technique.lint if c not in text]
            assert not absent, f"docs/techniques/{technique.page} does not mention {absent}"


def test_fixes_lint_autofixes_and_demo_rows_read_the_registry():
    """The inference_mode fix and the demo row that adds inference_mode answer the same codes
    (they disagreed before the registry)."""
    fixes = {fix.NAME: fix for fix in all_fixes()}
    assert set(fixes["inference_mode"].FINDING_CODES) == {"D301", "D302", "D303"}
    trainer_loop = next(step for step in STACK if step.key == "trainer_loop")
    assert set(fixes["inference_mode"].FINDING_CODES) <= set(trainer_loop.findings)
    for name, fix in fixes.items():
        assert fix.FINDING_CODES == techniques.finding_codes_for_fix(name)
        assert LINT_CODES[name] == techniques.lint_codes_for_fix(name)
    for step in (NAIVE, *STACK):
        assert step.findings == techniques.finding_codes_for_demo_row(step.key)
    assert [t.key for t in techniques.techniques_for_code("D203")] == [
        "torch_compile",
        "vectorize_loops",
    ]


def test_docs_cross_reference_is_current():
    committed = (REPO / "docs" / "techniques.md").read_text(encoding="utf-8")
    assert committed == techniques.render(), (
        "docs/techniques.md is stale: run `python -m torchdoctor.techniques > docs/techniques.md`"
        " (or `make docs`)"
    )
