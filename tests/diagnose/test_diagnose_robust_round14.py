"""Programs that do unusual things (issue 11, round 14): each test is a difference between a
program's plain run and its run under diagnose, found by bench/robust_programs.py's round 14
rows or named in round 13's closing note."""

from __future__ import annotations

import re
import zipfile

from robust_programs_helper import plain_and_diagnosed_target, run_diagnosed

# A whole step compiled (zero_grad, forward, backward and the optimizer's step in one function)
# and the "compile the optimizer step" recipe beside it.
COMPILED_STEP = """
net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
o = torch.optim.SGD(net.parameters(), lr=0.01)
@torch.compile(backend="eager")
def step(x):
    o.zero_grad()
    loss = net(x).pow(2).mean()
    loss.backward()
    o.step()
    return loss
for _ in range(25):
    loss = step(torch.randn(16, 8))
@torch.compile(fullgraph=False, backend="eager")
def optimizer_step():
    opt.step()
for _ in range(10):
    opt.zero_grad(); model(torch.randn(16, 8)).pow(2).mean().backward(); optimizer_step()
print("compiled step", loss.shape)
"""


def test_a_step_compiled_whole_runs_our_optimizer_hooks_eagerly(tmp_path):
    # Dynamo traced our global optimizer step hooks and the memory probe's step end: its
    # warnings about time.perf_counter and resource.getrusage went to the program's stderr,
    # and guards on our own state recompiled the step at every step up to dynamo's limit,
    # which the report then blamed on the program ("compiled new code during step(s) ...").
    # (no plain run beside it, to keep the test's time down: plainly its stderr has torch's own
    # record_function line only, and it prints the one line below)
    diagnosed = run_diagnosed(tmp_path, COMPILED_STEP, "--steps", "0")
    assert diagnosed.returncode == 0, diagnosed.stderr[-3000:]
    assert diagnosed.stdout.startswith("compiled step torch.Size([])\n")
    for ours in ("does not know how to trace", "torchdoctor", "recompil", "Warning"):
        assert ours not in diagnosed.stderr, diagnosed.stderr[-3000:]
    report = diagnosed.stdout[diagnosed.stdout.index("torchdoctor diagnose") :]
    # the recipe's function is compiled at its first call (step 25 or so): a true note; the
    # whole step compiled once, not again at each of its steps
    recompiled = re.search(r"compiled new code during step\(s\) (\d+)", report)
    assert recompiled is None or int(recompiled.group(1)) >= 20, report
    assert re.search(r"completed, \d+ measured steps", report), report


def test_how_python_is_given_the_program_reads_as_in_its_plain_run(tmp_path):
    # Three ways of starting a program (no training: the difference is in the start and end):
    # - through a symlink in another folder: Python puts the real file's folder first on
    #   sys.path, diagnose put the link's (its sibling import failed);
    # - a zip app that crashes: Python's printer finds no source line in the zip, `traceback`
    #   read one from it (the traceback differed by that line);
    # - a program that closes sys.stdout at its end: descriptor 1 stays open, but the report
    #   went to /dev/null with a note of ours on stderr.
    (tmp_path / "real").mkdir()
    (tmp_path / "bin").mkdir()
    (tmp_path / "real" / "helper.py").write_text("SCALE = 3\n")
    (tmp_path / "real" / "train.py").write_text("from helper import SCALE\nprint('scale', SCALE)\n")
    (tmp_path / "bin" / "train.py").symlink_to(tmp_path / "real" / "train.py")
    with zipfile.ZipFile(tmp_path / "app.zip", "w") as app:
        app.writestr("__main__.py", "print('in the zip')\nraise RuntimeError('zip app failed')\n")
    (tmp_path / "closes.py").write_text(
        "import sys\nprint('before', flush=True)\nsys.stdout.close()\nprint('after', flush=True)\n"
    )
    for target in ("bin/train.py", "app.zip", "closes.py"):
        plain, diagnosed = plain_and_diagnosed_target(tmp_path, target)
        assert diagnosed.returncode == plain.returncode, (target, diagnosed.stderr[-2000:])
        assert diagnosed.stdout.startswith(plain.stdout), (target, diagnosed.stdout[:500])
        assert f"torchdoctor diagnose {target}" in diagnosed.stdout, (target, diagnosed.stdout)
        assert diagnosed.stderr == plain.stderr, target
