"""Programs that do unusual things (issue 11, round 12): each test is a difference between a
program's plain run and its run under diagnose, found by bench/robust_programs.py's round 12
rows or by hand."""

from __future__ import annotations

import subprocess
import sys
from textwrap import dedent


def _plain_and_diagnosed(tmp_path, *target: str) -> tuple[subprocess.CompletedProcess, ...]:
    def run(*command: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, *command, *target],
            capture_output=True, text=True, cwd=tmp_path, timeout=120,
        )  # fmt: skip

    return run(), run("-m", "torchdoctor", "diagnose", "--steps", "0")


def test_a_module_or_folder_run_keeps_the_frames_python_shows(tmp_path):
    # `python -m pkg.train` and `python folder` start the traceback with runpy's frozen frames
    # (`_run_module_as_main`, `_run_code`); diagnose took out every runpy frame, and with them
    # those of the program's own `runpy.run_path` call. A folder's sys.argv[0] was made absolute.
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "train.py").write_text(
        dedent(
            """
            import runpy
            runpy.run_path("config_script.py")
            """
        )
    )
    (tmp_path / "config_script.py").write_text("raise ValueError('bad config')\n")
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "__main__.py").write_text(
        "import sys\nprint(sys.argv)\nraise KeyError('folder')\n"
    )
    for target in (("-m", "pkg.train"), ("folder",)):
        plain, diagnosed = _plain_and_diagnosed(tmp_path, *target)
        assert plain.returncode == diagnosed.returncode == 1, diagnosed.stderr
        assert "<frozen runpy>" in plain.stderr
        assert diagnosed.stderr == plain.stderr
        assert diagnosed.stdout.startswith(plain.stdout)
