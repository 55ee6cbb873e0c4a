"""The base class every lint rule derives from, and the docstring contract it must follow.

A rule is one module under `torchdoctor.lint.rules` holding one `Rule` subclass with a stable
`code`, a kebab-case `name`, the `fix_safety` of the fixes it offers, and a docstring whose
sections are exactly `What it does`, `Why is this bad`, `Example`, `Use instead`, `Fix safety`.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, ClassVar

from torchdoctor.lint.model import FIX_SAFETIES, Violation

if TYPE_CHECKING:
    from torchdoctor.lint.context import FileContext

LEVELS = ("error", "warning", "info")
DOC_SECTIONS = ("What it does", "Why is this bad", "Example", "Use instead", "Fix safety")
_SECTION_RE = re.compile(r"^## (.+?)\s*$", re.MULTILINE)


class Rule:
    code: ClassVar[str] = ""
    name: ClassVar[str] = ""
    fix_safety: ClassVar[str] = "none"
    # Severity: "error" for correctness bugs (wrong results, crashes), "warning" for speed
    # advice that usually pays, "info" for advice whose gain is usually negligible.
    level: ClassVar[str] = "warning"
    # Rules off by default run only when `--select`/`select` names their exact code.
    default_enabled: ClassVar[bool] = True

    def check(self, ctx: FileContext) -> Iterator[Violation]:  # pragma: no cover - abstract
        raise NotImplementedError

    @classmethod
    def doc(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def summary(cls) -> str:
        """The first sentence of `What it does`."""
        text = " ".join(cls.sections().get("What it does", "").split())
        return re.split(r"(?<!e\.g)(?<!i\.e)\.\s", text)[0].rstrip(".") + "."

    @classmethod
    def sections(cls) -> dict[str, str]:
        doc = cls.doc()
        heads = list(_SECTION_RE.finditer(doc))
        out = {}
        for i, match in enumerate(heads):
            end = heads[i + 1].start() if i + 1 < len(heads) else len(doc)
            out[match.group(1)] = doc[match.end() : end].strip()
        return out

    @classmethod
    def validate(cls) -> list[str]:
        """Problems with this rule's declaration (empty when it is well formed)."""
        problems = []
        if not re.fullmatch(r"TD\d{3}", cls.code):
            problems.append(f"{cls.__name__}: bad code {cls.code!r}")
        if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", cls.name):
            problems.append(f"{cls.__name__}: bad name {cls.name!r}")
        if cls.level not in LEVELS:
            problems.append(f"{cls.__name__}: bad level {cls.level!r}")
        if cls.fix_safety not in FIX_SAFETIES:
            problems.append(f"{cls.__name__}: bad fix_safety {cls.fix_safety!r}")
        if tuple(cls.sections()) != DOC_SECTIONS:
            problems.append(
                f"{cls.code}: docstring sections {tuple(cls.sections())} != {DOC_SECTIONS}"
            )
        return problems
