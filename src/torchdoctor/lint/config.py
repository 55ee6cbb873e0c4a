"""`[tool.torchdoctor.lint]` in pyproject.toml, found by walking up from the first path.

Keys: `select`, `ignore` (codes or prefixes), `exclude` (gitignore-style patterns relative to
the pyproject's folder), `per-file-ignores` (glob -> codes). Python 3.10 without `tomli`
installed cannot read TOML: the config is then skipped with a note, never guessed.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path

from torchdoctor.errors import UsageError
from torchdoctor.lint.gitignore import IgnoreRules

try:  # Python 3.11+
    import tomllib as _toml
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    try:
        import tomli as _toml
    except ModuleNotFoundError:
        _toml = None


@dataclass
class LintConfig:
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    root: Path | None = None  # folder of the pyproject.toml it came from
    notes: list[str] = field(default_factory=list)

    def exclude_rules(self) -> IgnoreRules | None:
        if not self.exclude or self.root is None:
            return None
        return IgnoreRules.from_lines(self.root, self.exclude)

    def ignored_for(self, path: Path) -> set[str]:
        """Codes/prefixes that `per-file-ignores` switches off for `path`."""
        if not self.per_file_ignores:
            return set()
        base = self.root or Path.cwd()
        try:
            rel = path.resolve().relative_to(base.resolve()).as_posix()
        except ValueError:
            rel = path.as_posix()
        out: set[str] = set()
        for pattern, codes in self.per_file_ignores.items():
            if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(path.name, pattern):
                out.update(codes)
        return out


def find_pyproject(start: Path) -> Path | None:
    current = start.resolve()
    if current.is_file():
        current = current.parent
    for folder in [current, *current.parents]:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


_KEYS = {"select", "ignore", "exclude", "per-file-ignores", "per_file_ignores"}


def _string_list(table: dict, key: str, where: Path) -> list[str]:
    value = table.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{where}: [tool.torchdoctor.lint] {key} must be a list of strings")
    return value


def load_config(start: Path) -> LintConfig:
    pyproject = find_pyproject(start)
    if pyproject is None:
        return LintConfig()
    if _toml is None:
        return LintConfig(
            notes=[f"{pyproject}: cannot read TOML on this Python (install tomli); config ignored"]
        )
    try:
        data = _toml.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, _toml.TOMLDecodeError) as exc:
        raise UsageError(f"{pyproject}: cannot read: {exc}") from exc
    table = data.get("tool", {}).get("torchdoctor", {}).get("lint", {})
    if not isinstance(table, dict):
        raise UsageError(f"{pyproject}: [tool.torchdoctor.lint] must be a table")
    unknown = sorted(set(table) - _KEYS)
    if unknown:  # a misspelled key would otherwise be ignored without a word
        raise UsageError(
            f"{pyproject}: [tool.torchdoctor.lint]: unknown key {unknown[0]!r} "
            f"(known: {', '.join(sorted(_KEYS - {'per_file_ignores'}))})"
        )
    per_file = table.get("per-file-ignores", table.get("per_file_ignores", {}))
    if not isinstance(per_file, dict):
        raise UsageError(f"{pyproject}: per-file-ignores must be a table of glob = [codes]")
    return LintConfig(
        select=_string_list(table, "select", pyproject),
        ignore=_string_list(table, "ignore", pyproject),
        exclude=_string_list(table, "exclude", pyproject),
        per_file_ignores={k: _string_list(per_file, k, pyproject) for k in per_file},
        root=pyproject.parent,
    )
