"""A small matcher for .gitignore patterns (the subset real projects use).

Supported: comments, blank lines, `!` negation, trailing `/` (directories only), leading or
inner `/` (anchored to the .gitignore's folder), `*`, `?`, `[...]`, `**` (any number of folders),
and escaped leading `\\#` / `\\!`. The last matching pattern wins, as in git.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class IgnorePattern:
    regex: re.Pattern
    negate: bool
    dir_only: bool


def _glob_to_regex(glob: str) -> str:
    out, i = [], 0
    while i < len(glob):
        ch = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("/**", i) and i + 3 == len(glob):
            out.append("/.*")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif ch == "*":
            out.append("[^/]*")
            i += 1
        elif ch == "?":
            out.append("[^/]")
            i += 1
        elif ch == "[":
            close = glob.find("]", i + 1)
            if close == -1:
                out.append(re.escape(ch))
                i += 1
            else:
                body = glob[i + 1 : close].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = close + 1
        elif ch == "\\" and i + 1 < len(glob):
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(ch))
            i += 1
    return "".join(out)


def parse_pattern(line: str) -> IgnorePattern | None:
    line = line.rstrip("\n").rstrip("\r")
    if not line.strip() or line.startswith("#"):
        return None
    line = line.rstrip(" ") if not line.endswith("\\ ") else line
    negate = line.startswith("!")
    if negate:
        line = line[1:]
    elif line.startswith("\\!") or line.startswith("\\#"):
        line = line[1:]
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    body = _glob_to_regex(line.lstrip("/"))
    regex = f"^{body}$" if anchored else f"^(?:.*/)?{body}$"
    return IgnorePattern(re.compile(regex), negate, dir_only)


class IgnoreRules:
    """The patterns of one ignore file, matched against paths relative to its folder."""

    def __init__(self, base: Path, patterns: list[IgnorePattern]):
        self.base = base
        self.patterns = patterns

    @classmethod
    def from_lines(cls, base: Path, lines) -> IgnoreRules:
        return cls(base, [p for p in map(parse_pattern, lines) if p is not None])

    @classmethod
    def from_file(cls, path: Path) -> IgnoreRules:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        return cls.from_lines(path.parent, text.splitlines())

    def match(self, path: Path, is_dir: bool) -> bool | None:
        """True (ignored), False (re-included by `!`), or None (no pattern matched)."""
        try:
            rel = path.relative_to(self.base).as_posix()
        except ValueError:
            return None
        verdict = None
        for pattern in self.patterns:
            if pattern.dir_only and not is_dir:
                continue
            if pattern.regex.match(rel):
                verdict = not pattern.negate
        return verdict


def is_ignored(stack: list[IgnoreRules], path: Path, is_dir: bool) -> bool:
    verdict = False
    for rules in stack:
        matched = rules.match(path, is_dir)
        if matched is not None:
            verdict = matched
    return verdict
