"""Whole scripts taken from the seed documents: the findings a reader of them would want,
and nothing on the seed that already applies every technique correctly."""

from __future__ import annotations

from pathlib import Path

import pytest
from lint_helpers import lint_text

SCRIPTS = Path(__file__).parent / "scripts"


@pytest.mark.parametrize(
    "name, expected",
    [
        # the dataset indexes arrays loaded in __init__: no TD102; TD105 (info) is off by default
        # line 35: the accuracy `.item()` of `step()`, which the batch loop calls every step
        ("seed001_cifar.py", [(35, "TD116"), (51, "TD116")]),
        (
            "seed002_tips.py",
            [(3, "TD115"), (5, "TD111"), (10, "TD115"), (14, "TD115"), (17, "TD109")],
        ),
        ("seed000_good.py", []),
    ],
)
def test_seed_scripts(name, expected):
    result = lint_text((SCRIPTS / name).read_text(), path=name)
    assert [(v.line, v.code) for v in result.violations] == expected


def test_safe_fixes_on_a_seed_script_keep_it_valid_and_quiet_for_fixed_rules():
    source = (SCRIPTS / "seed002_tips.py").read_text()
    fixed = lint_text(source, fix=True)
    assert fixed.changed and 'torch.amp.GradScaler("cuda")' in fixed.fixed_source
    # only the `from torch.cuda.amp import` line is left (no fix: its uses are rewritten)
    assert [v.line for v in fixed.violations if v.code == "TD115"] == [3]
    compile(fixed.fixed_source, "fixed.py", "exec")


def test_files_without_pytorch_are_only_syntax_checked():
    plain = "def evaluate(model, val_loader):\n    for x in val_loader:\n        model(x)\n"
    assert lint_text(plain).violations == []
    broken = lint_text("def f(:\n    pass\n")
    assert [(v.code, v.line, v.column) for v in broken.violations] == [("TD000", 1, 7)]


def test_a_crashing_rule_becomes_a_note_and_other_rules_still_report():
    from torchdoctor.lint.engine import lint_source
    from torchdoctor.lint.rule import Rule
    from torchdoctor.lint.rules import all_rules

    class Broken(Rule):
        code, name = "TD199", "broken"

        def check(self, ctx):
            raise RuntimeError("boom")

    rules = [Broken(), *[r for r in all_rules() if r.code == "TD110"]]
    result = lint_source("import torch\nm.load_state_dict(torch.load(p))\n", "t.py", rules)
    assert [v.code for v in result.violations] == ["TD110"]
    assert result.notes == ["t.py: internal error in TD199, skipped: RuntimeError: boom"]
