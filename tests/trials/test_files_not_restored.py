"""The files a trial's runs changed and could not put back reach the user: in the text report
(one line per configuration) and in the JSON (ConfigResult.files_not_restored)."""

from __future__ import annotations

import json

from rich.console import Console

from torchdoctor.trials.analysis import summarize
from torchdoctor.trials.render import render_json, render_terminal
from torchdoctor.trials.report import TrialReport, VariantResult
from torchdoctor.trials.runner import RunOutcome


def outcome(not_restored: list[str]) -> RunOutcome:
    result = {
        "failed_fixes": {},
        "status": "stopped",
        "used_fixes": ["workers"],
        "steps": [{"wall_s": 0.1, "cpu_s": 0.1, "samples": 8, "loss": 1.0}] * 4,
        "peak_memory_bytes": 1,
        "memory_source": "process_rss",
        "files_not_restored": not_restored,
    }
    return RunOutcome("x", result, 0, "", 1.0)


def test_files_a_trial_could_not_put_back_are_shown_in_text_and_json():
    """Round 11: the worker named them (a file a `subprocess` child appended to) and nothing
    showed them: the user's folder was left changed without a word."""
    baseline = summarize("baseline", [], [outcome([]), outcome([])], 1)
    workers = summarize(
        "workers",
        ["workers"],
        [outcome(["/p/notes.txt"]), outcome(["/p/a.log", "/p/notes.txt"])],
        1,
    )
    assert baseline.files_not_restored == []
    assert workers.files_not_restored == ["/p/a.log", "/p/notes.txt"]  # each file once, sorted
    report = TrialReport(
        target="train.py",
        argv=[],
        steps=4,
        warmup=1,
        repeats=2,
        seed=0,
        device_type="cpu",
        baseline=baseline,
        variants=[VariantResult(workers, None, None, None, None, "not measured")],
    )
    console = Console(record=True, width=200)
    render_terminal(report, console)
    text = console.export_text()
    assert "workers: 2 file(s) in the program's folder changed by its runs and not put back" in text
    assert "/p/a.log, /p/notes.txt" in text
    assert "baseline: " not in text.replace("baseline run-to-run", "")
    data = json.loads(render_json(report))["trials"]
    assert data["variants"][0]["config"]["files_not_restored"] == ["/p/a.log", "/p/notes.txt"]
