"""A Program (script or module, argv, cwd) is checked once, when made, and runs where it was
named: diagnose and the trial worker read it instead of a (script, args, module) triple."""

from __future__ import annotations

import json
import os

import pytest

from torchdoctor.errors import UsageError
from torchdoctor.program import Program, as_program


def test_a_missing_script_or_module_is_refused_when_the_program_is_made(tmp_path):
    with pytest.raises(UsageError, match="script not found: nope.py"):
        Program("nope.py", cwd=str(tmp_path))
    (tmp_path / "pkg").mkdir()
    with pytest.raises(UsageError, match="pkg is a directory without __main__.py"):
        Program("pkg", cwd=str(tmp_path))
    with pytest.raises(UsageError, match="no module named 'no_such_module_here'"):
        Program("no_such_module_here", module=True, cwd=str(tmp_path))


def test_a_package_without_main_is_left_to_python_m_which_imports_it_first(tmp_path):
    # `python -m pkg` runs the package's __init__ (which may train, or fail: the program's),
    # then refuses in one line; a refusal before the run hid a failing __init__'s traceback
    for name, main in (("tdr9_package_plain", None), ("tdr9_package_runnable", "print(1)")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("")
        if main:
            (tmp_path / name / "__main__.py").write_text(main)
        assert Program(name, module=True, cwd=str(tmp_path)).module


def test_script_and_module_are_found_relative_to_the_program_directory(tmp_path):
    (tmp_path / "train.py").write_text("")
    (tmp_path / "mymod_for_program_test.py").write_text("")
    script = Program("train.py", ["--lr", "0.1"], cwd=str(tmp_path))
    assert script.argv == ("--lr", "0.1")  # a list is kept as an immutable tuple
    assert script.path == str(tmp_path / "train.py")
    assert script.sys_path_entry == str(tmp_path)
    assert script.command_line() == ["train.py", "--lr", "0.1"]
    module = Program("mymod_for_program_test", module=True, cwd=str(tmp_path))
    assert module.sys_path_entry == str(tmp_path)
    assert module.command_line() == ["-m", "mymod_for_program_test"]


def test_as_program_takes_a_program_or_a_target_not_both(tmp_path):
    (tmp_path / "train.py").write_text("")
    program = Program("train.py", cwd=str(tmp_path))
    assert as_program(program) is program
    with pytest.raises(UsageError, match="either a Program or a target"):
        as_program(program, ["--extra"])


def test_diagnose_runs_the_program_in_its_directory_with_its_argv(tmp_path, monkeypatch):
    """The caller stands elsewhere: the script still sees its own directory and argv, and the
    caller's directory is given back afterwards."""
    from torchdoctor.diagnose.api import diagnose_script

    work = tmp_path / "work"
    work.mkdir()
    (work / "train.py").write_text(
        "import json, os, sys\n"
        "json.dump({'cwd': os.getcwd(), 'argv': sys.argv}, open('seen.json', 'w'))\n"
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    report = diagnose_script(Program("train.py", ["--epochs", "1"], cwd=str(work)), steps=0)
    seen = json.loads((work / "seen.json").read_text())
    assert seen == {"cwd": str(work), "argv": ["train.py", "--epochs", "1"]}
    assert os.getcwd() == str(elsewhere)
    assert report.run.argv == ["--epochs", "1"]
