"""The demo's diagnosis step never stops the demo: failures become one printed line."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

import torchdoctor.diagnose.api as diagnose_api
from torchdoctor.demo import diagnosis
from torchdoctor.demo.workload import SIZES, Workload


def console():
    return Console(file=io.StringIO(), width=120, no_color=True)


def workload():
    return Workload("shapes", SIZES[("shapes", True)], {}, Path("/nonexistent"), 0)


def test_failing_diagnosis_is_one_line_and_the_demo_goes_on(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("probe exploded")

    monkeypatch.setattr(diagnose_api, "diagnose_script", broken)
    out = console()
    result = diagnosis.diagnose_naive(workload(), steps=3, console=out)
    assert result == {
        "available": False,
        "error": "RuntimeError: probe exploded",
        "verdict": None,
        "findings": [],
    }
    assert "diagnosis unavailable: RuntimeError: probe exploded" in out.file.getvalue()


def test_renderer_failure_falls_back_to_plain_findings():
    summary = {
        "verdict": "data bound",
        "findings": [
            {
                "id": "D101",
                "title": "DataLoader in the main process",
                "severity": "warning",
                "saving": 0.47,
            }
        ],
    }
    out = console()
    diagnosis._render(object(), summary, out)  # not a Report: the real renderer fails
    text = out.file.getvalue()
    assert "diagnose report renderer failed" in text
    assert "D101 DataLoader in the main process (saves ~47% of step time)" in text
    assert "verdict: data bound" in text
