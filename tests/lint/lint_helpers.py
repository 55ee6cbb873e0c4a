"""Helpers shared by the lint tests (a uniquely named module, not conftest, so other
test folders' conftest files never shadow it)."""

import subprocess
import sys
from pathlib import Path

from torchdoctor.lint.engine import lint_source
from torchdoctor.lint.rules import all_rules
from torchdoctor.lint.selection import select_rules

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parents[2]


def lint_text(
    source: str, select: str | None = None, fix: bool = False, unsafe: bool = False, path="t.py"
):
    rules = select_rules(all_rules(), select.split(",") if select else [], [])
    return lint_source(source, path, rules, fix=fix, unsafe=unsafe)


def codes(result) -> list[str]:
    return [v.code for v in result.violations]


def run_cli(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "torchdoctor", "lint", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )
