"""A finding's source names pages the user has: docs/techniques/*.md of this repository and public
PyTorch docs by title, never the internal seed documents ("seed 001 (Mejora 2 ...)")."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
RULES = sorted((ROOT / "src" / "torchdoctor" / "diagnose" / "rules").glob("d[0-9]*.py"))


def _sources(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.keyword) and node.arg == "source":
            found.append(ast.literal_eval(node.value))  # a plain string: nothing computed
    return found


@pytest.mark.parametrize("rule", RULES, ids=lambda p: p.stem)
def test_sources_name_pages_the_user_has(rule):
    sources = _sources(rule)
    assert sources, f"{rule.name} gives no source"
    for source in sources:
        assert "seed" not in source.lower() and "mejora" not in source.lower(), source
        pages = re.findall(r"docs/techniques/[\w.-]+\.md", source)
        assert pages or "PyTorch" in source, source
        for page in pages:
            assert (ROOT / page).is_file(), f"{rule.name}: {page} does not exist"
