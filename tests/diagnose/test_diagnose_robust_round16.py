"""Programs that do unusual things (issue 11, round 16): each test is a difference between a
program's plain run and its run under diagnose, found by bench/robust_programs.py's round 16
rows or named in round 15's closing note."""

from __future__ import annotations

import re

from robust_programs_helper import COMPILED_CUSTOM_STEP, plain_and_diagnosed, run_diagnosed

# A custom optimizer's step compiled as one graph (no hook of ours runs inside it), then a
# whole step compiled as one graph: dynamo's error, caught and printed by the program itself
# (not by our crash printer)
ONE_GRAPH = (
    COMPILED_CUSTOM_STEP
    + """for _ in range(12):
    custom.zero_grad()
    model(torch.randn(16, 8)).pow(2).mean().backward()
    custom_step()
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
)


def test_steps_compiled_as_one_graph_are_counted_and_dynamos_caught_error_is_the_programs(
    tmp_path,
):
    d = run_diagnosed(tmp_path, ONE_GRAPH, "--steps", "0", "--warmup", "2")
    assert d.returncode == 0, d.stderr[-3000:]
    printed, _, report = d.stdout.partition("torchdoctor diagnose ")
    # the message the program printed lists its own frames, none of ours (as plainly)
    frames = re.findall(
        r'File "([^"]+)", line \d+, in (\w+)', printed.partition("from user code:")[2]
    )
    assert [name for _, name in frames] == ["whole_step"], printed
    assert "torchdoctor" not in printed, printed
    # the custom step's 12 iterations: steps end at backward() (the first one's was before the
    # step was compiled), and the report says why
    assert "no training step completed" not in report, report
    assert re.search(r"completed, (9|10) measured steps", report), report
    assert "inside a graph compiled with torch.compile(fullgraph=True)" in report, report


# A program's own counting wrappers over torch functions it replaced: a Python Tensor method, a C
# Tensor method (no functools.wraps), a torch.nn.functional function; and the original backward
# called through a reference the program kept (its wrapper does not run then)
OWN_WRAPPERS = """
import torch.nn.functional as F
counts = {}
def counting(name, original):
    def wrapper(*args, **kwargs):
        counts[name] = counts.get(name, 0) + 1
        return original(*args, **kwargs)
    return wrapper
kept_backward = torch.Tensor.backward
torch.Tensor.backward = counting("backward", torch.Tensor.backward)
torch.Tensor.sum = counting("sum", torch.Tensor.sum)
F.relu = counting("relu", F.relu)
for step in range(30):
    opt.zero_grad()
    loss = F.relu(model(torch.randn(16, 8))).sum()
    if step % 2:
        loss.backward()
    else:
        kept_backward(loss)
    opt.step()
print("counted", sorted(counts.items()))
"""


def test_a_programs_own_torch_wrappers_run_as_often_as_plainly(tmp_path):
    plain, diagnosed = plain_and_diagnosed(tmp_path, OWN_WRAPPERS, "--steps", "0")
    assert plain.returncode == 0, plain.stderr[-3000:]
    assert diagnosed.returncode == 0, diagnosed.stderr[-3000:]
    counted = plain.stdout.splitlines()[0]
    assert counted == "counted [('backward', 15), ('relu', 30), ('sum', 30)]", plain.stdout
    # the sampled step's function mode gets the wrapper back from torch's relay: it must run the
    # replaced original, not the wrapper a second time
    assert diagnosed.stdout.splitlines()[0] == counted, diagnosed.stdout
    assert "measured steps" in diagnosed.stdout, diagnosed.stdout
