"""Setup shared by the unusual-program tests (test_diagnose_robust*.py): a small training
program, and runs of a program as `python ...` and as `python -m torchdoctor diagnose ...`, each
a real subprocess in the test's folder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from textwrap import dedent

# the training loop the programs call (`train(steps)`); torch imported before it
TRAIN_LOOP = """
model = torch.nn.Linear(8, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
def train(steps):
    for _ in range(steps):
        opt.zero_grad()
        model(torch.randn(16, 8)).pow(2).mean().backward()
        opt.step()
"""

# a whole program's start: its imports, then the loop
TRAIN = (
    """
import sys, torch
torch.set_num_threads(1)"""
    + TRAIN_LOOP
)

# a custom optimizer (its step without torch's graph break) whose step is compiled as one graph
COMPILED_CUSTOM_STEP = """
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
"""


def run_python(folder: Path, *command: str, timeout: float = 240) -> subprocess.CompletedProcess:
    """`python *command` in `folder`, its output captured, no terminal on its stdin."""
    return subprocess.run(
        [sys.executable, *command],
        capture_output=True, text=True, cwd=folder, timeout=timeout, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def plain_and_diagnosed_target(
    folder: Path, *target: str, timeout: float = 240
) -> tuple[subprocess.CompletedProcess, subprocess.CompletedProcess]:
    """`target` (a script, `-m module`, a folder or a zip) run plainly, then diagnosed to its
    end (`--steps 0`)."""
    plain = run_python(folder, *target, timeout=timeout)
    diagnose = ("-m", "torchdoctor", "diagnose", "--steps", "0")
    return plain, run_python(folder, *diagnose, *target, timeout=timeout)


def write_train(folder: Path, body: str) -> None:
    """train.py: TRAIN, then `body`."""
    (folder / "train.py").write_text(TRAIN + dedent(body))


def run_diagnosed(folder: Path, body: str, *options: str) -> subprocess.CompletedProcess:
    """TRAIN + `body` run under `diagnose *options`."""
    write_train(folder, body)
    return run_python(folder, "-m", "torchdoctor", "diagnose", *options, "train.py")


def plain_and_diagnosed(
    folder: Path, body: str, *options: str
) -> tuple[subprocess.CompletedProcess, subprocess.CompletedProcess]:
    """TRAIN + `body` run plainly, then under `diagnose *options` (written again before it: a
    program may remove its own file)."""
    write_train(folder, body)
    plain = run_python(folder, "train.py")
    return plain, run_diagnosed(folder, body, *options)


def plain_and_diagnosed_side_by_side(
    folder: Path, body: str, *options: str, timeout: float = 240
) -> tuple[subprocess.CompletedProcess, subprocess.CompletedProcess]:
    """What `plain_and_diagnosed` returns, the two runs started together, each in its own
    subfolder (a program may remove its own file). Nearly all of each run's time is importing
    torch (round 16: 75% of the diagnosed run's wall time at load ~18), which the two runs pay
    alike: side by side, the test waits for the slower one, not for both, on any load."""
    runs = []
    for name, command in (
        ("plain", ()),
        ("diagnosed", ("-m", "torchdoctor", "diagnose", *options)),
    ):
        (folder / name).mkdir()
        write_train(folder / name, body)
        runs.append(
            subprocess.Popen(
                [sys.executable, *command, "train.py"],
                cwd=folder / name,
                text=True,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
            )
        )
    try:
        plain, diagnosed = (_finished(run, timeout) for run in runs)
    finally:
        for run in runs:  # the other one, when one ran out of time
            if run.poll() is None:
                run.kill()
                run.communicate()
    return plain, diagnosed


def _finished(run: subprocess.Popen, timeout: float) -> subprocess.CompletedProcess:
    stdout, stderr = run.communicate(timeout=timeout)
    return subprocess.CompletedProcess(run.args, run.returncode, stdout, stderr)
