"""SARIF 2.1.0 output for code-scanning tools (GitHub code scanning, IDEs)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from torchdoctor import __version__
from torchdoctor.lint.engine import SYNTAX_ERROR_CODE, SYNTAX_ERROR_NAME
from torchdoctor.lint.rules import rule_classes

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


# Rule levels -> SARIF's names for them ("info" is SARIF's "note").
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def rule_levels() -> dict[str, str]:
    return {SYNTAX_ERROR_CODE: "error", **{cls.code: cls.level for cls in rule_classes()}}


def fingerprint(code: str, path: str, line_text: str) -> str:
    """Stable across runs and line moves: rule + file + the finding's line, whitespace-normalized."""
    normalized = " ".join(line_text.split())
    return hashlib.sha256(f"{code}\0{Path(path).as_posix()}\0{normalized}".encode()).hexdigest()[
        :32
    ]


def _descriptors() -> list[dict]:
    out = [
        {
            "id": SYNTAX_ERROR_CODE,
            "name": SYNTAX_ERROR_NAME,
            "shortDescription": {"text": "The file does not parse."},
            "fullDescription": {
                "text": "The file is not valid Python, so no other rule could check it."
            },
            "help": {"text": "Fix the syntax error.", "markdown": "Fix the syntax error."},
            "defaultConfiguration": {"level": "error"},
        }
    ]
    for cls in rule_classes():
        sections = cls.sections()
        out.append(
            {
                "id": cls.code,
                "name": cls.name,
                "shortDescription": {"text": cls.summary()},
                "fullDescription": {"text": " ".join(sections.get("Why is this bad", "").split())},
                "help": {"text": cls.doc(), "markdown": cls.doc()},
                "defaultConfiguration": {
                    "level": _SARIF_LEVEL[cls.level],
                    "enabled": cls.default_enabled,
                },
                "properties": {"fixSafety": cls.fix_safety},
            }
        )
    return out


def render_sarif(result) -> str:
    rules = _descriptors()
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    levels = rule_levels()
    results = []
    for v in sorted(result.violations, key=lambda v: v.sort_key()):
        results.append(
            {
                "ruleId": v.code,
                "ruleIndex": index.get(v.code, 0),
                "level": _SARIF_LEVEL[levels.get(v.code, "warning")],
                "message": {"text": v.message},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": Path(v.path).as_posix()},
                            "region": {
                                "startLine": v.line,
                                "startColumn": v.column,
                                "endLine": v.end_line,
                                "endColumn": v.end_column,
                            },
                        }
                    }
                ],
                "partialFingerprints": {"torchdoctor/v1": fingerprint(v.code, v.path, v.line_text)},
            }
        )
    document = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {"name": "torchdoctor-lint", "version": __version__, "rules": rules}
                },
                "results": results,
            }
        ],
    }
    return json.dumps(document, indent=2) + "\n"
