"""Every rule against its fixtures: bad.py gives exactly expected.txt, every other non-fixed
file (good.py, near misses) gives nothing, fixed.py is what --fix produces, and fixing is
idempotent and leaves valid Python."""

from __future__ import annotations

import libcst as cst
import pytest
from lint_helpers import FIXTURES, lint_text

from torchdoctor.lint.rules import rule_classes

CODES = [cls.code for cls in rule_classes()]


def _expected(code: str) -> list[tuple[int, int, str]]:
    out = []
    for line in (FIXTURES / code / "expected.txt").read_text().split("\n"):
        if line.strip():
            position, found = line.split()
            row, col = position.split(":")
            out.append((int(row), int(col), found))
    return out


def test_every_rule_has_fixtures():
    assert sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()) == CODES


@pytest.mark.parametrize("code", CODES)
def test_bad_fixture_findings(code):
    result = lint_text((FIXTURES / code / "bad.py").read_text(), select=code)
    assert [(v.line, v.column, v.code) for v in result.violations] == _expected(code)
    assert _expected(code), "a bad fixture must produce findings"


@pytest.mark.parametrize(
    "path",
    sorted(p for p in FIXTURES.glob("TD*/*.py") if p.name not in ("bad.py", "fixed.py")),
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_near_misses_do_not_fire(path):
    result = lint_text(path.read_text(), select=path.parent.name)
    assert [(v.line, v.message) for v in result.violations] == []


@pytest.mark.parametrize("code", [c for c in CODES if (FIXTURES / c / "fixed.py").exists()])
def test_fix_output_exact_idempotent_and_parses(code):
    bad = (FIXTURES / code / "bad.py").read_text()
    fixed = lint_text(bad, select=code, fix=True, unsafe=True)
    assert fixed.fixed_source == (FIXTURES / code / "fixed.py").read_text()
    cst.parse_module(fixed.fixed_source)
    again = lint_text(fixed.fixed_source, select=code, fix=True, unsafe=True)
    assert not again.changed
    assert all(v.fix is None for v in again.violations)


@pytest.mark.parametrize("code", [c.code for c in rule_classes() if c.fix_safety == "unsafe"])
def test_safe_mode_never_applies_unsafe_fixes(code):
    bad = (FIXTURES / code / "bad.py").read_text()
    result = lint_text(bad, select=code, fix=True, unsafe=False)
    assert not result.changed
    assert any(v.fix is not None and v.fix.safety == "unsafe" for v in result.violations)


def test_rules_without_fixes_offer_none():
    for cls in rule_classes():
        bad = (FIXTURES / cls.code / "bad.py").read_text()
        result = lint_text(bad, select=cls.code)
        safeties = {v.fix.safety for v in result.violations if v.fix}
        assert safeties <= ({cls.fix_safety} if cls.fix_safety != "none" else set()), cls.code
