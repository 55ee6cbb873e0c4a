"""Programs that do unusual things (issue 11, round 16): each test is a difference between a
program's plain run and its run under diagnose, found by bench/robust_programs.py's round 16
rows or named in round 15's closing note."""

from __future__ import annotations

import re

from robust_programs_helper import plain_and_diagnosed, run_diagnosed

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


# a custom optimizer's step compiled as one graph: no hook of ours runs inside it
STEP_IN_ONE_GRAPH = """
class PlainSGD(torch.optim.Optimizer):
    def __init__(self, params, lr):
        super().__init__(params, dict(lr=lr))
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.data.add_(p.grad, alpha=-group["lr"])
custom = PlainSGD(model.parameters(), lr=0.01)
@torch.compile(fullgraph=True, backend="eager")
def custom_step():
    custom.step()
for _ in range(12):
    custom.zero_grad()
    model(torch.randn(16, 8)).pow(2).mean().backward()
    custom_step()
"""


def test_steps_whose_optimizer_step_is_one_compiled_graph_are_counted(tmp_path):
    d = run_diagnosed(tmp_path, STEP_IN_ONE_GRAPH, "--steps", "0", "--warmup", "2")
    assert d.returncode == 0, d.stderr[-3000:]
    assert "no training step completed" not in d.stdout, d.stdout
    assert re.search(r"completed, (9|10) measured steps", d.stdout), d.stdout
    assert "inside a graph compiled with torch.compile(fullgraph=True)" in d.stdout, d.stdout
