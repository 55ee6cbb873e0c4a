"""The terminal report a user copies from: fix code never wrapped, COLUMNS honoured on a pipe,
a legend for the breakdown bar, and a verdict that says where to look when no rule explains the
dominant part of the step."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys

import pytest
from rich.console import Console

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import (
    LinesObservation,
    LineStat,
    RunObservation,
    StepObservation,
)
from torchdoctor.diagnose.report.builder import build_report
from torchdoctor.diagnose.report.terminal import render_terminal

# Timing-based diagnoses: run after the rest of the suite, one at a time (tests/conftest.py).
pytestmark = pytest.mark.timing

LONG_FIX = (
    "loader = DataLoader(train_set, batch_size=64, shuffle=False, collate_fn=pad_batch, "
    "num_workers=4, persistent_workers=True, prefetch_factor=2)"
)


def _report():
    phases = {"data": 0.006, "h2d": 0.0, "forward": 0.002, "backward": 0.001}
    steps = [
        StepObservation(
            index=i, wall_s=0.01, phases={**phases, "optimizer": 0.0005, "other": 0.0005}
        )
        for i in range(5)
    ]
    finding = Finding(
        id="D101",
        title="t",
        severity="warning",
        saving=0.4,
        evidence=["e"],
        fix=LONG_FIX,
        source="",
    )
    return build_report(RunObservation(target="train.py", steps=steps), [finding])


def _render(terminal: bool, width: int = 80) -> str:
    out = io.StringIO()
    console = Console(
        file=out, force_terminal=terminal, width=width, no_color=not terminal, highlight=False
    )
    render_terminal(_report(), console)
    return re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue())  # colour codes out, layout kept


def test_fix_code_is_never_wrapped_on_an_80_column_terminal():
    text = _render(terminal=True)
    assert f"       {LONG_FIX}" in text  # one line, indented as printed: pastes as it reads
    assert len(LONG_FIX) > 80


def test_breakdown_bar_has_a_legend_in_colour_and_in_plain_text():
    plain = _render(terminal=False, width=200)
    assert "[DDDDDDDDDDDDDDDDDDDDDDDDDDDDDDFFFFFFFFFFBBBBB" in plain
    assert "D=data 60% (6.0 ms)  H=h2d 0% (0.0 ms)  F=forward 20% (2.0 ms)" in plain
    coloured = _render(terminal=True, width=200)
    assert "█" in coloured and "data 60% (6.0 ms)" in coloured and "D=data" not in coloured


def test_columns_is_honoured_when_piped():
    code = "from torchdoctor.console import make_console; print(make_console().width)"
    widths = [
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for env in ({"COLUMNS": "61"}, {"COLUMNS": ""})
    ]
    assert widths == ["61", "120"]


PYTHON_BETWEEN_STEPS = """
model = nn.Linear(16, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(32, 16), torch.randint(0, 2, (32,))
table = {}
for step in range(30):
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    for i in range(20000):  # bookkeeping in plain Python: no rule is about it
        table[i % 97] = i * step
"""


def test_verdict_says_where_to_look_when_no_rule_explains_the_dominant_part(diagnose_here):
    report = diagnose_here(PYTHON_BETWEEN_STEPS, steps=6, warmup=2)
    assert report.verdict.startswith("host-overhead bound"), report.verdict
    # it points somewhere: the line profile's top line, else how to look
    if "top line:" in report.verdict:
        assert "table[i % 97] = i * step" in report.verdict, report.verdict
    else:
        assert "explains" in report.verdict and "it is the code between the model" in report.verdict
        assert "--trace FILE" in report.verdict and "cProfile" in report.verdict


def test_verdict_names_no_gap_when_a_finding_acts_on_the_dominant_part():
    assert "no rule explains" not in _report().verdict  # D101 acts on the data wait


def test_findings_savings_of_the_run_are_compared_on_the_steps_scale():
    # evaluation takes half the measured time: D101 saving 20% of the run is 40% of the step,
    # most of the 60% data share; the same 20% with no evaluation is not
    def verdict(evaluation_s: float):
        phases = {"data": 0.006, "forward": 0.002, "backward": 0.001, "optimizer": 0.001}
        steps = [
            StepObservation(index=i, wall_s=0.01, phases=phases, evaluation_s=evaluation_s)
            for i in range(5)
        ]
        finding = Finding(
            id="D101", title="t", severity="warning", saving=0.2, evidence=["e"], fix="", source=""
        )
        return build_report(RunObservation(target="train.py", steps=steps), [finding]).reason

    assert verdict(0.01).unexplained is None
    gap = verdict(0.0).unexplained
    assert gap is not None and gap.kind == "data" and gap.explained == pytest.approx(0.2)


def test_the_top_line_is_named_when_the_findings_leave_the_dominant_part_unexplained():
    """cleanrl's DQN: 57% of its step outside the model, 37% of it the environment's step; D202
    saved 10% and the verdict said only "no rule explains the rest: ... cProfile". The line
    profile's top line of the dominant part is named beside the top fix."""
    phases = {"forward": 0.002, "backward": 0.001, "optimizer": 0.001, "other": 0.006}
    steps = [StepObservation(index=i, wall_s=0.01, phases=phases) for i in range(5)]
    env_step = LineStat(
        "dqn.py:173", "other", samples=37, self_samples=37, share=0.37, self_share=0.37,
        code="next_obs, rewards, terminations, truncations, infos = envs.step(actions)",
    )  # fmt: skip
    run = RunObservation(
        target="dqn.py", steps=steps, lines=LinesObservation(samples=100, lines=[env_step])
    )
    finding = Finding(
        id="D202", title="t", severity="info", saving=0.1, evidence=["e"], fix="", source=""
    )
    report = build_report(run, [finding])
    assert report.reason.unexplained is not None and report.reason.top_fix is not None
    assert "top line: dqn.py:173 `next_obs" in report.verdict, report.verdict
