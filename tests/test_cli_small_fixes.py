"""Small CLI behaviours: output files checked before the run, our options after SCRIPT, lint
with nothing to check, `train -q`, `--profile` without kineto's stderr lines."""

from __future__ import annotations

import subprocess
import sys
from textwrap import dedent

import pytest
from click.testing import CliRunner

from source_checkout import with_package_path
from torchdoctor.cli import cli

TRAIN = dedent(
    """
    import pathlib, sys
    import torch
    from torch import nn
    pathlib.Path("ran.marker").write_text(" ".join(sys.argv[1:]))
    model = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(8, 4)
    for _ in range(12):
        optimizer.zero_grad()
        model(x).pow(2).mean().backward()
        optimizer.step()
    """
)


def _diagnose(tmp_path, *args):
    (tmp_path / "train.py").write_text(TRAIN, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "torchdoctor", "diagnose", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=with_package_path({"OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"}),
    )


@pytest.mark.parametrize(
    ("flag", "path", "why"),
    [
        ("--json", "/sys/torchdoctor-report.json", "cannot be written"),  # read-only filesystem
        ("--html", "/proc/torchdoctor-report.html", "cannot be written"),
        # the program ran, then writing its rank's observation raised a bare traceback
        ("--rank-dir", "/proc/torchdoctor-ranks", "cannot be written"),
    ],
)
def test_unwritable_output_is_refused_before_the_program_runs(tmp_path, flag, path, why):
    result = _diagnose(tmp_path, flag, path, "train.py")
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"torchdoctor: error: {flag} {path}: {why}"), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "ran.marker").exists()  # the program never started


def test_options_after_script_warn_in_one_line_and_profile_keeps_stderr_clean(tmp_path):
    """Our options after SCRIPT go to the program (with one warning line); --profile does not
    leak kineto's `USDT:` lines (one run checks both: each run costs seconds)."""
    result = _diagnose(
        tmp_path, "--steps", "4", "--warmup", "2", "--profile", "train.py", "--try", "x", "--y"
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        "torchdoctor: warning: --try after SCRIPT goes to the program, not to torchdoctor; "
        "put torchdoctor's options before SCRIPT"
    ]
    assert (tmp_path / "ran.marker").read_text() == "--try x --y"
    assert "USDT" not in result.stdout
    assert "--profile covered steps" in result.stdout


def test_lint_with_no_python_file_says_so_and_fails(tmp_path):
    (tmp_path / "notes.txt").write_text("not python\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["lint", str(tmp_path)])
    assert result.exit_code == 2
    assert f"no Python file to check in {tmp_path}" in result.output


def test_train_accepts_short_quiet():
    from torchdoctor.cli.train import train

    ctx = train.make_context("train", ["shapes", "-q"])
    assert ctx.params["quiet"] is True


@pytest.mark.skipif(
    __import__("torch").cuda.is_available(), reason="tf32 can be tried on a CUDA machine"
)
def test_quiet_try_still_says_that_no_fix_could_be_tried(tmp_path):
    result = _diagnose(tmp_path, "-q", "--steps", "3", "--warmup", "2", "--try", "tf32", "train.py")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines[0].startswith("verdict: ") and len(lines) == 2, lines
    assert lines[1].startswith("--try: no fix can be tried on this machine (tf32: "), lines
