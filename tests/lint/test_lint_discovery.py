"""Which files are linted: .gitignore patterns, default excludes, config `exclude`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from torchdoctor.errors import UsageError
from torchdoctor.lint.discovery import discover
from torchdoctor.lint.gitignore import IgnoreRules


@pytest.mark.parametrize(
    "pattern, path, is_dir, expected",
    [
        ("*.py", "a/b/c.py", False, True),
        ("/build.py", "build.py", False, True),
        ("/build.py", "sub/build.py", False, None),
        ("data/", "data", True, True),
        ("data/", "data", False, None),
        ("docs/*.py", "docs/x.py", False, True),
        ("docs/*.py", "docs/a/x.py", False, None),
        ("**/gen/*.py", "a/b/gen/x.py", False, True),
        ("logs/**", "logs/a/b.py", False, True),
        ("a/**/b.py", "a/x/y/b.py", False, True),
        ("a/**/b.py", "a/b.py", False, True),
        ("ex?mple.py", "example.py", False, True),
        ("[ab].py", "b.py", False, True),
        ("[!ab].py", "b.py", False, None),
        ("# comment", "# comment", False, None),
        ("\\#hash.py", "#hash.py", False, True),
    ],
)
def test_pattern_matching(pattern, path, is_dir, expected):
    rules = IgnoreRules.from_lines(Path("/r"), [pattern])
    assert rules.match(Path("/r") / path, is_dir) is expected


def test_negation_last_match_wins():
    rules = IgnoreRules.from_lines(Path("/r"), ["*.py", "!keep.py"])
    assert rules.match(Path("/r/drop.py"), False) is True
    assert rules.match(Path("/r/keep.py"), False) is False


def _tree(root: Path, files: list[str]) -> None:
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")


def test_walk_respects_gitignore_and_default_excludes(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("generated/\n*_pb2.py\n")
    _tree(
        tmp_path,
        [
            "train.py",
            "pkg/model.py",
            "pkg/api_pb2.py",
            "generated/g.py",
            ".venv/lib/site.py",
            "build/lib/x.py",
            "node_modules/m.py",
            "pkg/__pycache__/c.py",
            "notes.txt",
            "sub/.gitignore",
            "sub/skip.py",
            "sub/keep.py",
        ],
    )
    (tmp_path / "sub" / ".gitignore").write_text("skip.py\n")
    found = sorted(p.relative_to(tmp_path).as_posix() for p in discover([str(tmp_path)]))
    assert found == ["pkg/model.py", "sub/keep.py", "train.py"]


def test_gitignore_of_enclosing_repo_applies_to_subfolder(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("experiments/old/\n")
    _tree(tmp_path, ["experiments/old/a.py", "experiments/new/b.py"])
    found = [p.name for p in discover([str(tmp_path / "experiments")])]
    assert found == ["b.py"]


def test_explicit_file_is_linted_even_if_gitignored(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("*.py\n")
    _tree(tmp_path, ["a.py"])
    assert discover([str(tmp_path / "a.py")]) == [tmp_path / "a.py"]
    assert discover([str(tmp_path)]) == []


def test_missing_path_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="no such file"):
        discover([str(tmp_path / "nope.py")])


def test_a_named_pipe_given_by_name_is_refused_not_read(tmp_path, monkeypatch):
    # reading a FIFO named like a source file waited forever for a writer
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "loop").mkdir()
    (tmp_path / "loop" / "self").symlink_to(tmp_path / "loop")  # a symlink loop is not followed
    (tmp_path / "loop" / "ok.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match="pipe.py: not a regular file"):
        discover(["pipe.py"])
    assert discover(["loop"]) == [Path("loop/ok.py")]
