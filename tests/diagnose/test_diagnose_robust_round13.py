"""Programs that do unusual things (issue 11, round 13): each test is a difference between a
program's plain run and its run under diagnose (or `--try`), found by bench/robust_programs.py's
round 13 rows or by hand."""

from __future__ import annotations

import subprocess
import sys
from textwrap import dedent

TRAIN = """
import sys, torch
torch.set_num_threads(1)
model = torch.nn.Linear(8, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
def train(steps):
    for _ in range(steps):
        opt.zero_grad()
        model(torch.randn(16, 8)).pow(2).mean().backward()
        opt.step()
"""


def _plain_and_diagnosed(tmp_path, body: str, *options: str):
    def run(*command: str) -> subprocess.CompletedProcess:
        (tmp_path / "train.py").write_text(TRAIN + dedent(body))  # the run before may remove it
        return subprocess.run(
            [sys.executable, *command, "train.py"],
            capture_output=True, text=True, cwd=tmp_path, timeout=120, stdin=subprocess.DEVNULL,
        )  # fmt: skip

    return run(), run("-m", "torchdoctor", "diagnose", *options)


FINALIZED_AT_EXIT = """
import pathlib
class Run:
    def __init__(self, name): self.name, self.steps = name, 0
    def __del__(self):  # pathlib: Python's exit has taken `open` away from a __del__ by then
        print(self.name, "closed after", self.steps, "steps")
        pathlib.Path(self.name + ".txt").write_text("closed")
run = Run("run")
_private = Run("private")
class Cyclic:
    def __init__(self): self.me = self
    def __del__(self): print("cycle collected")
cyclic = Cyclic()
import weakref
weakref.finalize(model, print, "model finalized")  # at the exit, before the namespace goes
for _ in range(12):
    train(1); run.steps += 1
print("trained")
"""


def test_objects_finalized_at_the_exit_print_where_python_prints_them(tmp_path):
    # A `__del__` of the program's that prints at the interpreter's exit (a run logger, a
    # progress bar closing itself) printed after our report: the program's objects lived on
    # for the what-if probes. Python's exit clears __main__ after the program's last line. A
    # weakref.finalize callback (weakref's own atexit handler runs it) printed after it too.
    plain, diagnosed = _plain_and_diagnosed(tmp_path, FINALIZED_AT_EXIT, "--steps", "0")
    assert plain.returncode == diagnosed.returncode == 0, diagnosed.stderr[-2000:]
    assert plain.stdout.startswith("trained\nmodel finalized\nrun closed after 12 steps\n")
    assert "cycle collected" in plain.stdout
    assert diagnosed.stdout.startswith(plain.stdout), diagnosed.stdout[:600]
    assert diagnosed.stdout.count("closed after") == 2


def test_a_package_without_main_runs_its_init_as_python_m_does(tmp_path):
    # `python -m pkg` imports the package before it finds no __main__: a failing __init__ shows
    # its traceback (exit 1), a working one prints, then Python's one-line refusal (exit 1).
    # diagnose refused both before the run, exit 2, and the __init__'s error was never shown.
    for name, init in (("broken", "print('init runs')\nraise ValueError('bad init')\n"),
                       ("plain", "print('init runs')\n")):  # fmt: skip
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(init)

        def run(*command: str, name: str = name) -> subprocess.CompletedProcess:
            return subprocess.run(
                [sys.executable, *command, "-m", name],
                capture_output=True, text=True, cwd=tmp_path, timeout=120,
            )  # fmt: skip

        plain, diagnosed = run(), run("-m", "torchdoctor", "diagnose", "--steps", "0")
        assert plain.returncode == diagnosed.returncode == 1, diagnosed.stderr[-2000:]
        assert diagnosed.stdout.startswith("init runs\n"), diagnosed.stdout[:300]
        assert diagnosed.stderr == plain.stderr


def test_a_script_that_removes_itself_is_quoted_from_the_text_that_ran(tmp_path):
    # A generated script that removes itself at its start: the report quoted its lines as
    # empty backticks; its crash's traceback shows no source line, as plainly.
    body = """
    import os
    os.remove(__file__)
    for _ in range(25):
        opt.zero_grad()
        loss_of_the_removed_script = model(torch.randn(16, 8)).pow(2).mean()
        loss_of_the_removed_script.backward()
        opt.step()
    raise RuntimeError("no source to show")
    """
    plain, diagnosed = _plain_and_diagnosed(tmp_path, body, "--steps", "0")
    assert plain.returncode == diagnosed.returncode == 1
    assert diagnosed.stderr == plain.stderr  # no source line in the traceback
    report = diagnosed.stdout[diagnosed.stdout.index("torchdoctor diagnose") :]
    assert "loss_of_the_removed_script.backward()" in report, report


def test_a_log_record_names_the_programs_line_not_ours(tmp_path):
    # A log format with %(filename)s:%(lineno)d %(funcName)s (and torch's own log lines, which
    # show the path) named torchdoctor/diagnose/probes/io.py's wrapper for every record: the
    # io probe's timing wrapper of Logger._log sat where logging looks for the caller.
    body = """
    import logging
    logging.basicConfig(format="%(filename)s:%(lineno)d %(funcName)s %(message)s")
    log = logging.getLogger("train")
    def report(step):
        log.warning("step %d", step, stacklevel=2)  # names report's caller
    for step in range(25):
        train(1)
        if step % 10 == 0:
            log.warning("at step %d", step)
            report(step)
    logging.LoggerAdapter(log, {}).warning("done")
    """
    plain, diagnosed = _plain_and_diagnosed(tmp_path, body, "--steps", "0")
    assert plain.returncode == diagnosed.returncode == 0
    assert "train.py:" in plain.stderr and "<module>" in plain.stderr
    assert diagnosed.stderr == plain.stderr
