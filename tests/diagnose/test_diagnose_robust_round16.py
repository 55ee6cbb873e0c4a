"""Programs that do unusual things (issue 11, round 16): each test is a difference between a
program's plain run and its run under diagnose, found by bench/robust_programs.py's round 16
rows or named in round 15's closing note."""

from __future__ import annotations

import re

from robust_programs_helper import plain_and_diagnosed

# dynamo's error caught and its message printed by the program itself (not by our crash printer)
CAUGHT_DYNAMO_ERROR = """
train(4)
@torch.compile(fullgraph=True, backend="eager")
def whole_step(x):
    opt.zero_grad()
    model(x).pow(2).mean().backward()
    opt.step()
try:
    whole_step(torch.randn(16, 8))
except Exception as exc:
    print("caught:", exc)
"""


def _user_code_frames(text: str) -> list[str]:
    """The frame lines dynamo wrote after "from user code:"."""
    after = text.partition("from user code:")[2]
    return re.findall(r'File "[^"]+", line \d+, in \w+', after)


def test_a_caught_dynamo_error_lists_the_programs_frames_only(tmp_path):
    plain, diagnosed = plain_and_diagnosed(tmp_path, CAUGHT_DYNAMO_ERROR, "--steps", "0")
    assert diagnosed.returncode == plain.returncode == 0, diagnosed.stderr[-3000:]
    printed = diagnosed.stdout.partition("torchdoctor diagnose ")[0]
    assert "from user code:" in printed, printed
    assert "torchdoctor" not in printed, printed
    assert _user_code_frames(printed) == _user_code_frames(plain.stdout), printed
