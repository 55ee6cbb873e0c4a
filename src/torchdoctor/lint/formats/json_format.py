"""JSON output, schema version 1 (documented in docs/lint.md)."""

from __future__ import annotations

import json

from torchdoctor import __version__

SCHEMA_VERSION = 1


def finding_dict(v) -> dict:
    return {
        "code": v.code,
        "name": v.name,
        "message": v.message,
        "path": v.path,
        "line": v.line,
        "column": v.column,
        "end_line": v.end_line,
        "end_column": v.end_column,
        "fix": None
        if v.fix is None
        else {"applicability": v.fix.safety, "description": v.fix.description},
    }


def render_json(result) -> str:
    violations = sorted(result.violations, key=lambda v: v.sort_key())
    document = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "torchdoctor-lint", "version": __version__},
        "summary": {
            "files": len(result.files),
            "findings": len(violations),
            "fixed": sum(f.fixes_applied for f in result.files),
            "fixable": sum(v.fix is not None for v in violations),
        },
        "findings": [finding_dict(v) for v in violations],
        "notes": list(result.notes),
    }
    return json.dumps(document, indent=2) + "\n"
