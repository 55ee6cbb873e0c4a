"""[tool.torchdoctor.lint] in pyproject.toml, and --select/--ignore."""

from __future__ import annotations

import pytest

from torchdoctor.errors import UsageError
from torchdoctor.lint.rules import all_rules
from torchdoctor.lint.runner import LintOptions, run_lint
from torchdoctor.lint.selection import select_rules

SOURCE = "import torch\nm.load_state_dict(torch.load(p))\nb = torch.nn.DataParallel(m)\n"


def _codes(project, options=None, target=None):
    result = run_lint([str(target or project)], options or LintOptions())
    return sorted({v.code for v in result.violations})


def _configure(project, body: str):
    (project / "pyproject.toml").write_text(
        "[project]\nname = 'demo'\n\n[tool.torchdoctor.lint]\n" + body
    )


def test_select_and_ignore_prefixes():
    chosen = {r.code for r in select_rules(all_rules(), ["TD11"], ["TD111"])}
    assert chosen == {f"TD11{i}" for i in range(10)} - {"TD111", "TD117"}  # TD117: off by default
    assert "TD117" in {r.code for r in select_rules(all_rules(), ["TD117"], [])}
    specific = {r.code for r in select_rules(all_rules(), ["TD111"], ["TD11"])}
    assert specific == {"TD111"}  # the more specific pattern wins
    assert {r.code for r in select_rules(all_rules(), ["TD1"], ["TD11"])} >= {"TD101", "TD122"}


def test_config_select_ignore(project):
    (project / "train.py").write_text(SOURCE)
    assert _codes(project) == ["TD110", "TD111", "TD118"]
    _configure(project, 'select = ["TD11"]\nignore = ["TD111"]\n')
    assert _codes(project) == ["TD110", "TD118"]


def test_command_line_select_overrides_config_select(project):
    (project / "train.py").write_text(SOURCE)
    _configure(project, 'select = ["TD110"]\n')
    assert _codes(project, LintOptions(select=["TD118"])) == ["TD118"]


def test_config_found_by_walking_up_from_the_first_path(project):
    (project / "src" / "pkg").mkdir(parents=True)
    (project / "src" / "pkg" / "train.py").write_text(SOURCE)
    _configure(project, 'ignore = ["TD110", "TD111"]\n')
    assert _codes(project, target=project / "src" / "pkg") == ["TD118"]


def test_per_file_ignores_and_exclude(project):
    (project / "scripts").mkdir()
    (project / "scripts" / "one.py").write_text(SOURCE)
    (project / "legacy").mkdir()
    (project / "legacy" / "old.py").write_text(SOURCE)
    _configure(
        project,
        'exclude = ["legacy/"]\n[tool.torchdoctor.lint.per-file-ignores]\n"scripts/*.py" = ["TD110", "TD111"]\n',
    )
    result = run_lint([str(project)], LintOptions())
    assert [(v.path.split("/")[-1], v.code) for v in result.violations] == [("one.py", "TD118")]


@pytest.mark.parametrize(
    "body, message",
    [
        ('select = ["TD999"]\n', "unknown rule code"),
        ('select = "TD1"\nignore = [1]\n', "list of strings"),
        ("select = [\n", "cannot read"),
        ('ignor = ["TD102"]\n', "unknown key 'ignor'"),
    ],
)
def test_bad_config_is_a_usage_error(project, body, message):
    (project / "train.py").write_text(SOURCE)
    _configure(project, body)
    with pytest.raises(UsageError, match=message):
        run_lint([str(project)], LintOptions())
