"""`--json FILE`: the report as JSON, schema version "2" (docs/report-schema.md)."""

from __future__ import annotations

import json
import math
from pathlib import Path

from torchdoctor.diagnose.report.model import Report


def _finite(value):
    """JSON has no NaN/Infinity: write null instead, everywhere."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def report_json(report: Report) -> str:
    return json.dumps(_finite(report.to_dict()), indent=2, allow_nan=False)


def write_json(report: Report, path: str | Path) -> None:
    Path(path).write_text(report_json(report) + "\n", encoding="utf-8")
