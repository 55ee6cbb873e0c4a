"""The project's planted scripts (tests/diagnose/rules/scripts/), diagnosed by the benches that set
a finding's stated saving beside the saving its fix really gives."""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

from torchdoctor.diagnose.api import diagnose_script
from torchdoctor.diagnose.report.model import Report

SCRIPTS = Path(__file__).resolve().parent.parent / "tests" / "diagnose" / "rules" / "scripts"


def diagnose_planted(name: str, **options) -> Report:
    """Planted script `name` diagnosed in this process with `diagnose_script`'s `options`, its
    own prints hidden."""
    with contextlib.redirect_stdout(io.StringIO()):
        return diagnose_script(str(SCRIPTS / f"{name}.py"), **options)


_IN_A_FRESH_PROCESS = """
import contextlib, io, pickle, sys
import torch
from torchdoctor.diagnose.api import diagnose_script
torch.set_num_threads(1)
with contextlib.redirect_stdout(io.StringIO()):
    report = diagnose_script(sys.argv[1], **pickle.loads(bytes.fromhex(sys.argv[2])))
with open(sys.argv[3], "wb") as out:
    pickle.dump(report, out)
"""


def diagnose_planted_fresh(name: str, **options) -> Report:
    """`diagnose_planted` in a fresh process, as `torchdoctor diagnose` runs: what a copy's calls
    pay depends on the process's allocator history (page faults, whatif/allocator.py), and in
    the bench's own process, after its imports and earlier diagnoses, the program's evaluation
    forwards faulted 29 pages each where the CLI's saw 39-557."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "report.pickle")
        subprocess.run(
            [
                sys.executable,
                "-c",
                _IN_A_FRESH_PROCESS,
                str(SCRIPTS / f"{name}.py"),
                pickle.dumps(options).hex(),
                path,
            ],
            check=True,
        )
        with open(path, "rb") as report:
            return pickle.load(report)
