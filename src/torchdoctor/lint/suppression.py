"""`# noqa` comments: on a line (`# noqa`, `# noqa: TD101,TD102`) and for a whole file
(`# torchdoctor: noqa`, `# torchdoctor: noqa: TD101`).

Comments are found with the tokenizer (not a text search) so a "# noqa" inside a string does
not count; files without the word "noqa" skip tokenizing entirely.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field

from torchdoctor.lint.model import Violation

_FILE_RE = re.compile(r"#\s*torchdoctor:\s*noqa(?::\s*(?P<codes>[A-Z0-9, ]+))?", re.IGNORECASE)
_LINE_RE = re.compile(
    r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE
)
ALL = frozenset({"*"})


def _codes(text: str | None) -> frozenset[str]:
    if not text:
        return ALL
    return frozenset(c.strip().upper() for c in re.split(r"[,\s]+", text) if c.strip())


@dataclass
class Suppressions:
    file_codes: frozenset[str] = frozenset()
    line_codes: dict[int, frozenset[str]] = field(default_factory=dict)

    def suppresses(self, violation: Violation) -> bool:
        for codes in (self.file_codes, self.line_codes.get(violation.line, frozenset())):
            if codes is ALL or "*" in codes or violation.code in codes:
                return True
        return False


def parse_suppressions(source: str) -> Suppressions:
    found = Suppressions()
    if "noqa" not in source.lower():
        return found
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return found
    for tok in tokens:
        if tok.type != tokenize.COMMENT:
            continue
        file_match = _FILE_RE.search(tok.string)
        if file_match:
            found.file_codes = found.file_codes | _codes(file_match.group("codes"))
            continue
        line_match = _LINE_RE.search(tok.string)
        if line_match:
            found.line_codes[tok.start[0]] = _codes(line_match.group("codes"))
    return found
