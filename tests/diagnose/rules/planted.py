"""Shared by the line and habit rule tests: diagnose a planted script from scripts/ with one
torch thread (two OpenMP threads on a shared two-core machine make tiny steps slow at random)."""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
import torch

from torchdoctor.diagnose.api import diagnose_script

SCRIPTS = Path(__file__).parent / "scripts"


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def diagnose(name: str, steps: int):
    report = diagnose_script(str(SCRIPTS / f"{name}.py"), steps=steps, warmup=3)
    assert report.run.status == "stopped", (report.run.status, report.run.error)
    return report


def line_of(name: str, text: str) -> int:
    """Number of the first line of scripts/NAME.py that contains `text`."""
    lines = (SCRIPTS / f"{name}.py").read_text().splitlines()
    return next(number for number, line in enumerate(lines, 1) if text in line)


@contextmanager
def busy_core(loops: int):
    """This thread (and the threads it starts: the line sampler) pinned to one core, with `loops`
    busy-loop processes pinned to the same core: the training thread waits for the CPU."""
    if not hasattr(os, "sched_setaffinity"):
        pytest.skip("no CPU affinity on this platform")
    before = os.sched_getaffinity(0)
    core = min(before)
    code = f"import os\nos.sched_setaffinity(0, {{{core}}})\nwhile True: pass"
    busy = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(loops)]
    os.sched_setaffinity(0, {core})
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)
        for process in busy:
            process.kill()
            process.wait()


def diagnose_planted(rows, script: str, *args: str):
    """A short real diagnosis (6 measured steps, no what-if timing) of the styles.py row named
    `script` among `rows`, with the script's own arguments (`--fixed`: its control)."""
    path = str(next(p.path for p in rows if p.script == script))
    report = diagnose_script(path, args, steps=6, warmup=3, whatif=False)
    assert report.run.status == "stopped", (report.run.status, report.run.error)
    return report


def found(report) -> list[tuple[str, str]]:
    """(code, severity) of each finding, in report order."""
    return [(f.id, f.severity) for f in report.findings]


def assert_top_error_and_quiet_control(rows, script: str) -> None:
    """The planted correctness problem is the top finding, an error, and the script's control
    (`--fixed`) gets nothing above info."""
    planted = next(p for p in rows if p.script == script)
    report = diagnose_planted(rows, script)
    assert report.findings[0].id == planted.code, found(report)
    assert report.findings[0].severity == "error", found(report)
    control = diagnose_planted(rows, script, "--fixed")
    assert [f for f in found(control) if f[1] != "info"] == [], found(control)
