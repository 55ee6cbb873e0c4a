"""Helpers for diagnose tests: write a real training script, run `python -m torchdoctor diagnose`
on it in a subprocess, read the JSON report back."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from diagnose_prelude import PRELUDE


class Diagnosis:
    def __init__(self, result: subprocess.CompletedProcess, json_path: Path):
        self.result = result
        self.returncode = result.returncode
        self.stdout = result.stdout
        self.stderr = result.stderr
        self.report = json.loads(json_path.read_text()) if json_path.exists() else None

    @property
    def run(self) -> dict:
        return self.report["run"]


@pytest.fixture
def diagnose(tmp_path):
    """diagnose(body, *options, args=(), name="train.py") -> Diagnosis"""

    def run(body: str, *options: str, args=(), name: str = "train.py", prelude: bool = True):
        script = tmp_path / name
        script.write_text((PRELUDE if prelude else "") + textwrap.dedent(body))
        json_path = tmp_path / "report.json"
        command = [sys.executable, "-m", "torchdoctor", "diagnose", "--json", str(json_path)]
        result = subprocess.run(
            [*command, *options, str(script), *args],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )
        return Diagnosis(result, json_path)

    return run


@pytest.fixture
def diagnose_here(tmp_path):
    """diagnose_here(body, **diagnose_script options) -> Report, in this process (no torch import
    per test: the observation-level tests stay inside the time budget)."""
    from torchdoctor.diagnose.api import diagnose_script

    def run(body: str, **options):
        script = tmp_path / "train.py"
        script.write_text(PRELUDE + textwrap.dedent(body))
        return diagnose_script(str(script), **options)

    return run


@pytest.fixture(autouse=True)
def _restore_torch_threads():
    """In-process diagnoses run PRELUDE (one torch thread) in this process: give it back."""
    import torch

    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


@pytest.fixture(autouse=True)
def _strict_rules(monkeypatch):
    """A rule that raises must fail its test (and CI), not hide in a report note: in user runs a
    failing rule only costs its findings. Subprocess diagnoses inherit this variable."""
    from torchdoctor.diagnose.rules_runner import STRICT_ENV

    monkeypatch.setenv(STRICT_ENV, "1")


@pytest.fixture
def one_torch_thread():
    """One torch thread for the test, as the what-if probes time on CPU (their CPU-time clock);
    the thread count before is put back."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
