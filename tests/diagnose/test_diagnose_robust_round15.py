"""Programs that do unusual things (issue 11, round 15): each test is a difference between a
program's plain run and its run under diagnose, found by bench/robust_programs.py's round 15
rows or named in round 14's closing note."""

from __future__ import annotations

import re

from robust_programs_helper import (
    COMPILED_CUSTOM_STEP,
    plain_and_diagnosed,
    run_diagnosed,
    run_python,
)

# Under `torch.compile(fullgraph=True)`: a custom optimizer's step (no graph break: it trains,
# plainly), then a whole step with zero_grad inside (dynamo's error: the program's crash).
FULLGRAPH_STEPS = (
    COMPILED_CUSTOM_STEP
    + """for _ in range(20):
    custom.zero_grad()
    model(torch.randn(16, 8)).pow(2).mean().backward()
    custom_step()
print("custom optimizer trained")
@torch.compile(fullgraph=True, backend="eager")
def whole_step(x):
    opt.zero_grad()
    model(x).pow(2).mean().backward()
    opt.step()
whole_step(torch.randn(16, 8))
"""
)


def _without_log_stamps(stderr: str) -> str:
    """torch's log lines start with their time and process id"""
    return re.sub(r"(?m)^[DIWE]\d{4} [\d:.]+ \d+ ", "", stderr)


def test_steps_compiled_as_one_graph_read_as_in_the_plain_run(tmp_path):
    # Our optimizer step hooks are dynamo-disabled (a graph break, run eagerly): under
    # fullgraph=True that graph break was the program's error, one it does not have plainly: a
    # custom optimizer's compiled step crashed under diagnose only, and Adam's error named our
    # hook ("Skip inlining ... OptimizerProbe._pre_step") instead of torch's `_use_grad`.
    # Dynamo's "from user code:" lines in its message listed our zero_grad wrapper's frame.
    plain, diagnosed = plain_and_diagnosed(tmp_path, FULLGRAPH_STEPS, "--steps", "0")
    assert plain.returncode == diagnosed.returncode == 1, diagnosed.stderr[-3000:]
    assert plain.stdout.startswith("custom optimizer trained\n"), plain.stderr[-3000:]
    assert diagnosed.stdout.startswith(plain.stdout), diagnosed.stdout[:1000]
    assert "torchdoctor" not in diagnosed.stderr, diagnosed.stderr[-3000:]
    # the same frames, in the traceback and in dynamo's "from user code:"; dynamo words the
    # skipped call its own way ("Attempted to call" where plainly it inlines torch's zero_grad)
    crash, expected = _without_log_stamps(diagnosed.stderr), _without_log_stamps(plain.stderr)
    assert _frames(crash) == _frames(expected), diagnosed.stderr[-3000:]
    assert crash[crash.index("from user code:") :] == expected[expected.index("from user code:") :]


def _frames(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.lstrip().startswith("File ")]


KEEPS_A_WEAK_REFERENCE = """
import weakref, torch
import kept
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
kept.refs.append(weakref.ref(model))
compiled = torch.compile(model, backend="eager")
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(12):
    opt.zero_grad()
    compiled(torch.randn(16, 8)).pow(2).mean().backward()
    opt.step()
"""

LONG_LIVED_PROCESS = """
import gc, sys
sys.path.insert(0, ".")
import kept
from torchdoctor.diagnose.api import diagnose_script
from torchdoctor.diagnose.session import Session
diagnose_script("compiled.py", steps=5, warmup=1, whatif=False)
gc.collect()
sessions = sum(type(o) is Session for o in gc.get_objects())  # isinstance warns on some
print("model let go", kept.refs[0]() is None, "sessions left", sessions)
"""


def test_a_compiled_programs_model_and_our_session_are_let_go(tmp_path):
    # After `diagnose_script` of a compiled model in a long-lived process (a notebook), the
    # program's model and our Session stayed reachable: dynamo's tables built while our patches
    # were on (`all_tensor_attrs`, export's logging functions, lru caches such as torch's
    # `get_testing_overrides`, imported before us) kept our wrappers, and their closures the
    # session.
    (tmp_path / "kept.py").write_text("refs = []\n")
    (tmp_path / "compiled.py").write_text(KEEPS_A_WEAK_REFERENCE)
    (tmp_path / "driver.py").write_text(LONG_LIVED_PROCESS)
    result = run_python(tmp_path, "driver.py")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Warning" not in result.stderr, result.stderr[-3000:]
    assert result.stdout.endswith("model let go True sessions left 0\n"), result.stdout[-2000:]


OPTIMIZER_IN_BACKWARD = """
net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
per_param = {p: torch.optim.SGD([p], lr=0.01) for p in net.parameters()}
def step_now(p):
    per_param[p].step()
    per_param[p].zero_grad()
for p in net.parameters():
    p.register_post_accumulate_grad_hook(step_now)
for _ in range(30):
    loss = net(torch.randn(16, 8)).pow(2).mean()
    loss.backward()
print("stepped in backward", loss.dim())
"""


def test_an_optimizer_stepped_inside_backward_is_diagnosed(tmp_path):
    # Optimizers stepped in post-accumulate-grad hooks end every step inside backward: the op
    # counter's modes, pushed there, were dropped by the autograd engine when the backward
    # ended, and popping them at the next step end raised "trying to pop from empty mode
    # stack" in the program's backward() (exit 1, no report).
    diagnosed = run_diagnosed(tmp_path, OPTIMIZER_IN_BACKWARD, "--steps", "0")
    assert diagnosed.returncode == 0, diagnosed.stderr[-3000:]
    assert diagnosed.stdout.startswith("stepped in backward 0\n"), diagnosed.stdout[:1000]
    assert "torchdoctor diagnose train.py: completed" in diagnosed.stdout, diagnosed.stdout
    assert "optimizer steps inside backward" in diagnosed.stdout, diagnosed.stdout
    assert diagnosed.stderr == "", diagnosed.stderr[-3000:]  # plainly: nothing
