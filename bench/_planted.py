"""The project's planted scripts (tests/diagnose/rules/scripts/), diagnosed by the benches that set
a finding's stated saving beside the saving its fix really gives."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

from torchdoctor.diagnose.api import diagnose_script
from torchdoctor.diagnose.report.model import Report

SCRIPTS = Path(__file__).resolve().parent.parent / "tests" / "diagnose" / "rules" / "scripts"


def diagnose_planted(name: str, **options) -> Report:
    """Planted script `name` diagnosed in this process with `diagnose_script`'s `options`, its
    own prints hidden."""
    with contextlib.redirect_stdout(io.StringIO()):
        return diagnose_script(str(SCRIPTS / f"{name}.py"), **options)
