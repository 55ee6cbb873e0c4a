"""Rules that read what the project declares (its torch requirement) and rule levels: the
checks a new user meets first on a real repository."""

from __future__ import annotations

import json

import pytest
from lint_helpers import lint_text, run_cli

LOAD = "import torch\nm.load_state_dict(torch.load(path))\n"
SCALER = "import torch\nscaler = torch.cuda.amp.GradScaler()\n"


def _lint_in(tmp_path, source, select, **project_files):
    for name, text in project_files.items():
        (tmp_path / name.replace("__", ".")).write_text(text)
    script = tmp_path / "src" / "train.py"
    script.parent.mkdir(exist_ok=True)
    script.write_text(source)
    return lint_text(source, select=select, path=str(script))


@pytest.mark.parametrize(
    "files, expected",
    [
        ({}, ["TD111"]),
        ({"pyproject__toml": '[project]\ndependencies = ["torch>=2.6", "numpy"]\n'}, []),
        ({"requirements__txt": "numpy\ntorch==2.7.1\n"}, []),
        ({"setup__cfg": "[options]\ninstall_requires =\n    torch>=2.4\n"}, ["TD111"]),
        ({"requirements__txt": "torch==0.4.1.post2\n"}, []),  # no weights_only before 1.13
        ({"requirements__txt": "torchvision>=0.20\n# torch>=2.6\n"}, ["TD111"]),
    ],
)
def test_weights_only_follows_the_declared_torch(tmp_path, files, expected):
    found = _lint_in(tmp_path, LOAD, "TD111", **files)
    assert [v.code for v in found.violations] == expected


def test_deprecated_amp_follows_the_declared_torch(tmp_path):
    (tmp_path / "old").mkdir()
    (tmp_path / "wide").mkdir()
    old = _lint_in(tmp_path / "old", SCALER, "TD115", requirements__txt="torch<=2.2\n")
    assert old.violations == []  # not deprecated in the torch it runs on
    wide = _lint_in(tmp_path / "wide", SCALER, "TD115", requirements__txt="torch>=1.7\n")
    assert [v.code for v in wide.violations] == ["TD115"]
    assert wide.violations[0].fix is None  # torch.amp.GradScaler needs torch 2.3


def test_info_rule_is_off_by_default_and_selected_by_code(project):
    target = project / "infer.py"
    target.write_text(
        "import torch\n\n\ndef predict(model, x):\n    with torch.no_grad():\n"
        "        return model(x)\n"
    )
    assert run_cli(target).returncode == 0
    assert run_cli("--select", "TD1", target).returncode == 0  # a prefix does not turn it on
    picked = run_cli("--select", "TD105", target, "--format", "sarif")
    sarif = json.loads(picked.stdout)
    assert [r["level"] for r in sarif["runs"][0]["results"]] == ["note"]
    rules = {r["id"]: r for r in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["TD105"]["defaultConfiguration"] == {"level": "note", "enabled": False}
    assert rules["TD108"]["defaultConfiguration"]["level"] == "error"


def test_correctness_bugs_are_errors_and_negligible_advice_is_off():
    from torchdoctor.lint.rules import rule_classes

    levels = {cls.code: cls.level for cls in rule_classes()}
    assert {levels[c] for c in ("TD107", "TD108", "TD109")} == {"error"}
    off = {cls.code for cls in rule_classes() if not cls.default_enabled}
    assert off == {"TD103", "TD105", "TD117"}
    assert all(levels[c] == "info" for c in off)


def test_a_project_importing_torch_six_runs_on_torch_1_and_gets_no_td115(tmp_path):
    # torch 2.0 removed `torch._six`: code importing it (itself or through a module of its
    # project) runs before torch.cuda.amp was deprecated
    engine = "import torch\nimport util.misc as misc\n\nwith torch.cuda.amp.autocast():\n    pass\n"
    (tmp_path / "util").mkdir()
    (tmp_path / "util" / "misc.py").write_text("import torch\nfrom torch._six import inf\n")
    script = tmp_path / "engine.py"
    script.write_text(engine)
    assert lint_text(engine, select="TD115", path=str(script)).violations == []
    other = tmp_path / "engine2.py"  # a project module without torch._six: flagged
    other.write_text(engine)
    (tmp_path / "util2").mkdir()
    (tmp_path / "util2" / "misc.py").write_text("import torch\nfrom math import inf\n")
    fresh = engine.replace("util.misc", "util2.misc")
    assert [v.code for v in lint_text(fresh, select="TD115", path=str(other)).violations] == [
        "TD115"
    ]
    itself = SCALER.replace("import torch\n", "import torch\nfrom torch._six import inf\n")
    assert lint_text(itself, select="TD115", path=str(script)).violations == []
