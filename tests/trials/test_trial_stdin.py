"""A trial worker never reads the terminal: a program that reads stdin (a prompt, `input()`, a
config piped in) got diagnose's own stdin in every trial, and with a terminal or a pipe left
open it waited, unseen (trials print nothing of the program's), until the trial's timeout."""

from __future__ import annotations

import os
from textwrap import dedent

from torchdoctor.program import Program
from torchdoctor.trials.runner import TrialPlan, run_one


def test_a_trial_of_a_program_reading_stdin_reads_end_of_file_not_our_stdin(tmp_path):
    (tmp_path / "train.py").write_text(
        dedent(
            """
            import sys, torch
            torch.set_num_threads(1)
            steps = int(sys.stdin.readline() or 4)  # blocks while a writer keeps stdin open
            model = torch.nn.Linear(4, 1)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for _ in range(steps):
                opt.zero_grad()
                model(torch.randn(8, 4)).pow(2).mean().backward()
                opt.step()
            """
        )
    )
    plan = TrialPlan(Program("train.py", cwd=str(tmp_path)), {"baseline": []}, 3, 1, timeout_s=60)
    reader, writer = os.pipe()  # our stdin: a pipe whose writer stays open, like a terminal
    saved_stdin = os.dup(0)
    os.dup2(reader, 0)
    try:
        outcome = run_one(plan, "baseline", str(tmp_path))
    finally:
        os.dup2(saved_stdin, 0)
        for fd in (saved_stdin, reader, writer):
            os.close(fd)
    assert outcome.returncode == 0, outcome.stderr_tail
    assert outcome.result is not None
