"""The rule set as a whole: layout, purity, ranking, good loops, and the generated catalogue."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rule_builders import good_cpu_run, good_h100_run

from torchdoctor.diagnose import catalogue
from torchdoctor.diagnose.rules import all_rules
from torchdoctor.diagnose.rules_runner import check_all as run_rules

REPO = Path(__file__).resolve().parents[3]
RULES = all_rules()


def test_codes_are_unique_sorted_and_match_module_names():
    codes = [rule.CODE for rule in RULES]
    assert codes == sorted(codes) and len(set(codes)) == len(codes)
    assert len(codes) >= 25
    for rule in RULES:
        assert re.fullmatch(r"D[1-8]\d\d", rule.CODE)
        assert rule.__name__.rsplit(".", 1)[1].startswith(rule.CODE.lower() + "_")


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.CODE)
def test_docstring_has_exactly_the_ruff_sections(rule):
    summary, sections = catalogue.parse_docstring(rule.__doc__)
    assert summary.startswith(rule.CODE + ": ")
    assert list(sections) == list(catalogue.SECTIONS)
    assert "```python" in sections["Example"] and "```python" in sections["Use instead"]
    # how the saving is obtained: a model of the fix, or time measured on the program's own run
    why = sections["Why is this bad"]
    assert "Estimated saving" in why or "Measured saving" in why


def test_parse_docstring_rejects_bad_layouts():
    good = "\n".join(f"## {name}\ntext" for name in catalogue.SECTIONS)
    catalogue.parse_docstring("D1: x\n" + good)
    bad_layouts = (
        "D1: x\n## What it does\ntext",  # sections missing
        "D1: x\n" + good.replace("Fix safety", "Fix"),  # a section misnamed
        "D1: x\nstray\n" + good,  # text before the first section
        "D1: x\n" + good.replace("## Example\ntext", "## Example\n"),  # an empty section
    )
    for bad in bad_layouts:
        with pytest.raises(catalogue.CatalogueError):
            catalogue.parse_docstring(bad)


def test_rules_import_no_torch():
    code = (
        "import sys, torchdoctor.diagnose.rules as r; r.all_rules(); "
        "import torchdoctor.diagnose.catalogue; print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_good_loops_get_nothing_above_info():
    for run in (good_cpu_run(), good_h100_run()):
        findings = run_rules(run)
        assert [f for f in findings if f.severity != "info"] == []


def test_findings_are_well_formed_and_ranked_by_saving():
    run = good_cpu_run()
    run.loaders[0].num_workers = 0
    run.loaders[0].dataset_type = "ImageFiles"  # per-sample work: workers help (D101)
    for step in run.steps:
        step.phases["data"] += 0.02
        step.wall_s += 0.02
    run.io.prints_per_step, run.io.print_s_per_step = 1, 0.003
    findings = run_rules(run)
    assert [f.id for f in findings][:2] == ["D101", "D702"]
    for f in findings:
        assert 0.0 <= f.saving <= 1.0 and f.evidence and f.fix and f.source
        json.dumps(f.to_dict())  # details must stay JSON-serialisable


def test_catalogue_is_current():
    rendered = catalogue.render(RULES)
    committed = (REPO / "docs" / "diagnose-rules.md").read_text(encoding="utf-8")
    assert committed == rendered, (
        "docs/diagnose-rules.md is stale: run "
        "`python -m torchdoctor.diagnose.catalogue > docs/diagnose-rules.md`"
    )
    for rule in RULES:
        assert f"## {rule.CODE}: {rule.TITLE}" in rendered
