"""Which files `torchdoctor lint PATHS` looks at.

Folders are walked for `*.py`/`*.pyi`, skipping default folders (.venv, .git, __pycache__,
build, dist, node_modules...), anything a .gitignore (of the enclosing repository or any folder
below it) ignores, and the config's `exclude`. A file named explicitly is always linted unless
the config's `exclude` matches it.
"""

from __future__ import annotations

import os
from pathlib import Path

from torchdoctor.errors import UsageError
from torchdoctor.lint.gitignore import IgnoreRules, is_ignored

DEFAULT_EXCLUDES = frozenset(
    {
        ".venv",
        "venv",
        ".git",
        "__pycache__",
        "build",
        "dist",
        "node_modules",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".eggs",
        ".hg",
        ".svn",
    }
)
SUFFIXES = (".py", ".pyi")


def _repo_ignores(folder: Path) -> list[IgnoreRules]:
    """.gitignore files from the enclosing repository root down to (not including) `folder`."""
    chain = []
    for parent in folder.parents:
        chain.append(parent)
        if (parent / ".git").exists():
            break
    else:
        chain = []  # not in a repository: the parents' .gitignore files do not apply
    stack = []
    for parent in reversed(chain):
        if (parent / ".gitignore").is_file():
            stack.append(IgnoreRules.from_file(parent / ".gitignore"))
    return stack


def _walk(
    folder: Path, stack: list[IgnoreRules], exclude: IgnoreRules | None, out: list[Path]
) -> None:
    if (folder / ".gitignore").is_file():
        stack = [*stack, IgnoreRules.from_file(folder / ".gitignore")]
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        path = Path(entry.path)
        is_dir = entry.is_dir(follow_symlinks=False)
        if is_dir and entry.name in DEFAULT_EXCLUDES:
            continue
        if is_ignored(stack, path, is_dir) or (exclude and exclude.match(path, is_dir)):
            continue
        if is_dir:
            _walk(path, stack, exclude, out)
        elif entry.name.endswith(SUFFIXES) and entry.is_file():
            out.append(path)


def discover(paths: list[str], exclude: IgnoreRules | None = None) -> list[Path]:
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise UsageError(f"{raw}: no such file or directory")
        if path.is_dir():
            absolute = path.resolve()
            stack = _repo_ignores(absolute)
            found: list[Path] = []
            _walk(absolute, stack, exclude, found)
            files.extend(path / f.relative_to(absolute) for f in found)
        elif not path.is_file():  # a named pipe or a device: reading it could wait forever
            raise UsageError(f"{raw}: not a regular file")
        elif not (exclude and exclude.match(path.resolve(), False)):
            files.append(path)
    seen, unique = set(), []
    for f in files:
        key = f.resolve()
        if key not in seen:
            seen.add(key)
            unique.append(f)
    return unique
