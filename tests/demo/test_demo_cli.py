"""`torchdoctor demo` end to end, in a real subprocess, at --quick size."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


def run_demo(tmp_path, *args, timeout=240):
    env = dict(os.environ, TORCHDOCTOR_CACHE=str(tmp_path / "cache"), OMP_NUM_THREADS="1")
    return subprocess.run(
        [sys.executable, "-m", "torchdoctor", "demo", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("demo")
    out = tmp_path / "demo.json"
    return run_demo(tmp_path, "--quick", "--json", str(out)), out


def test_quick_demo_prints_the_table(quick_run):
    result, _ = quick_run
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "[2/3] what torchdoctor diagnose finds" in out
    assert "verdict:" in out  # the diagnosis of the naive script was shown
    for text in (
        "s/epoch",
        "speedup",
        "this step",
        "naive loop (seed 001)",
        "+ DataLoader workers",
        "+ batch 256, lr x8 [*]",
        "lr may need retuning",
        "quick runs are too short to measure",
        "s/epoch: the row's one epoch",
    ):
        assert text in out


def test_quick_demo_json(quick_run):
    result, path = quick_run
    assert result.returncode == 0, result.stderr
    document = json.loads(path.read_text())
    assert document["schema_version"] == 2 and document["recipe"] == "shapes"
    assert document["device"] in ("cpu", "cuda")
    assert document["intra_op_threads"] == 1  # OMP_NUM_THREADS=1 in run_demo above
    assert document["diagnosis"]["available"] is True
    rows = document["rows"]
    assert [r["key"] for r in rows][0] == "naive" and rows[-1]["key"] == "large_batch"
    naive = rows[0]["epoch_s"]
    for previous, current in zip([None] + rows[:-1], rows):
        assert isinstance(current["epoch_s"], float) and current["epoch_s"] > 0
        # --quick: one epoch per row, so the one epoch is the figure
        assert current["epoch_times_s"] == [current["epoch_s"]] == [current["first_epoch_s"]]
        assert current["train_samples"] == document["train_samples_per_epoch"]
        assert current["speedup_vs_naive"] == pytest.approx(naive / current["epoch_s"])
        expected = 1.0 if previous is None else previous["epoch_s"] / current["epoch_s"]
        assert current["step_speedup"] == pytest.approx(expected)
        assert 0.0 <= current["final_accuracy"] <= 1.0


def test_quiet_cifar_demo_prints_only_the_table(tmp_path):
    result = run_demo(tmp_path, "--recipe", "cifar-resnet", "--quick", "--no-diagnose", "-q")
    assert result.returncode == 0, result.stderr
    assert "[1/3]" not in result.stdout and "cifar-resnet on" in result.stdout
    assert "speedup" in result.stdout


def test_bad_device_is_one_line_exit_2(tmp_path):
    result = run_demo(tmp_path, "--device", "tpu0", timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == ["torchdoctor: error: unknown device 'tpu0'"]


def test_json_into_missing_directory_fails_before_running(tmp_path):
    result = run_demo(
        tmp_path, "--quick", "--json", str(tmp_path / "no" / "demo.json"), timeout=120
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"torchdoctor: error: --json {tmp_path / 'no' / 'demo.json'}: directory "
        f"{tmp_path / 'no'} does not exist"
    ]
    assert "[1/3]" not in result.stdout  # nothing ran
