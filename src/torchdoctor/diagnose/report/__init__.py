"""Reports: the Report model and builder, and renderers (terminal, json, html, trace) that only
lay out what the builder computed."""

from torchdoctor.diagnose.report.builder import build_report
from torchdoctor.diagnose.report.model import SCHEMA_VERSION, Report

__all__ = ["Report", "SCHEMA_VERSION", "build_report"]
