"""`python -m torchdoctor lint` as a user runs it: exit codes, formats, --fix, --diff."""

from __future__ import annotations

import json

from lint_helpers import FIXTURES, run_cli

BAD = "import torch\nscaler = torch.cuda.amp.GradScaler()\nm.load_state_dict(torch.load(p))\n"


def test_exit_codes_clean_findings_usage(project):
    clean = project / "clean.py"
    clean.write_text("import torch\nx = torch.zeros(3)\n")
    bad = project / "bad.py"
    bad.write_text(BAD)
    assert run_cli(clean).returncode == 0
    out = run_cli(bad)
    assert out.returncode == 1
    assert f"{bad}:2:10: TD115 " in out.stdout and "[*]" in out.stdout
    assert "Found 3 findings" in out.stdout
    for args in ([project / "missing.py"], ["--select", "TD999", bad], ["--unsafe-fixes", bad]):
        usage = run_cli(*args)
        assert usage.returncode == 2, args
        assert usage.stderr.startswith("torchdoctor: error: ") and usage.stderr.count("\n") == 1, (
            usage.stderr
        )
    bad_format = run_cli("--format", "xml", bad)  # rejected by click itself
    assert bad_format.returncode == 2 and "Invalid value for '--format'" in bad_format.stderr
    assert "Traceback" not in bad_format.stderr


def test_syntax_error_is_reported_and_run_continues(project):
    (project / "broken.py").write_text("def f(:\n    pass\n")
    (project / "bad.py").write_text(BAD)
    out = run_cli(project, "--format", "json")
    assert out.returncode == 1
    findings = json.loads(out.stdout)["findings"]
    assert [f["code"] for f in findings if f["path"].endswith("broken.py")] == ["TD000"]
    assert {f["code"] for f in findings if f["path"].endswith("bad.py")} == {
        "TD110",
        "TD111",
        "TD115",
    }


def test_diff_changes_nothing_and_fix_writes(project):
    target = project / "bad.py"
    target.write_text(BAD)
    diff = run_cli("--diff", target)
    assert diff.returncode == 1
    assert '+scaler = torch.amp.GradScaler("cuda")' in diff.stdout
    assert "weights_only" not in diff.stdout  # unsafe: only with --unsafe-fixes
    assert target.read_text() == BAD
    fixed = run_cli("--fix", target)
    assert fixed.returncode == 1  # TD110/TD111 remain
    assert target.read_text() == BAD.replace(
        "torch.cuda.amp.GradScaler()", 'torch.amp.GradScaler("cuda")'
    )
    assert "Fixed 1 finding" in fixed.stdout
    assert run_cli("--diff", target, "--select", "TD115").returncode == 0


def test_json_and_sarif_and_github_formats(project):
    target = project / "bad.py"
    target.write_text(BAD)
    doc = json.loads(run_cli(target, "--format", "json").stdout)
    assert doc["schema_version"] == 1
    assert doc["summary"] == {"files": 1, "findings": 3, "fixed": 0, "fixable": 2}
    first = doc["findings"][0]
    assert set(first) == {
        "code",
        "name",
        "message",
        "path",
        "line",
        "column",
        "end_line",
        "end_column",
        "fix",
    }
    assert first["fix"] == {
        "applicability": "safe",
        "description": 'Use `torch.amp.GradScaler("cuda", ...)`',
    }

    sarif = json.loads(run_cli(target, "--format", "sarif").stdout)
    assert sarif["version"] == "2.1.0" and "$schema" in sarif
    driver = sarif["runs"][0]["tool"]["driver"]
    for rule in driver["rules"]:
        assert {
            "id",
            "name",
            "shortDescription",
            "fullDescription",
            "help",
            "defaultConfiguration",
        } <= set(rule)
        assert rule["defaultConfiguration"]["level"] in ("note", "warning", "error")
    results = sarif["runs"][0]["results"]
    assert {r["ruleId"] for r in results} == {"TD110", "TD111", "TD115"}
    for r in results:
        region = r["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
        assert r["level"] in ("warning", "error") and r["message"]["text"]
        assert len(r["partialFingerprints"]["torchdoctor/v1"]) == 32
    # fingerprints survive the finding moving to another line
    target.write_text("\n\n" + BAD)
    moved = json.loads(run_cli(target, "--format", "sarif").stdout)["runs"][0]["results"]
    assert [r["partialFingerprints"] for r in moved] == [r["partialFingerprints"] for r in results]

    github = run_cli(target, "--format", "github").stdout.splitlines()
    assert github[0].startswith(f"::warning file={target},line=4,col=10,")
    assert "title=TD115::TD115 " in github[0]


def test_quiet_prints_findings_only(project):
    target = project / "bad.py"
    target.write_text(BAD)
    out = run_cli("-q", target)
    assert out.returncode == 1
    assert len(out.stdout.splitlines()) == 3 and "Found" not in out.stdout


def test_default_path_is_current_folder(project):
    (project / "train.py").write_text(BAD)
    (project / ".venv").mkdir()
    (project / ".venv" / "bad.py").write_text(BAD)
    out = run_cli("--select", "TD115", "-q", cwd=project)
    assert out.stdout.splitlines() == [
        "train.py:2:10: TD115 `torch.cuda.amp.GradScaler` is deprecated; "
        'use `torch.amp.GradScaler("cuda", ...)` [*]'
    ]


def test_parallel_jobs_give_the_same_findings(project):
    for i in range(12):
        (project / f"f{i}.py").write_text((FIXTURES / "TD116" / "bad.py").read_text())
    serial = run_cli(project, "--format", "json")
    parallel = run_cli(project, "--format", "json", "--jobs", "2")
    assert json.loads(serial.stdout)["findings"] == json.loads(parallel.stdout)["findings"]
