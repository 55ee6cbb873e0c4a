"""`--html FILE`: one self-contained page (inline CSS and SVG, no scripts, no network) with the
verdict, the step-time breakdown, a per-step timeline, memory, findings and notes."""

from __future__ import annotations

from html import escape
from pathlib import Path

from torchdoctor.diagnose.observations import PHASES
from torchdoctor.diagnose.report.model import Report, saving_words

COLOURS = {
    "data": "#d9534f",
    "h2d": "#a05bc8",
    "forward": "#5cb85c",
    "backward": "#428bca",
    "optimizer": "#5bc0de",
    "other": "#f0ad4e",
}
CSS = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:960px;color:#222}
h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.6em}
.verdict{font-size:1.15em;font-weight:600;padding:.6em;background:#f4f4f4;
 border-left:4px solid #333}
table{border-collapse:collapse}td,th{padding:2px 10px;text-align:left;border-bottom:1px solid #ddd}
pre{background:#f6f8fa;padding:.6em;overflow-x:auto}.finding{margin-bottom:1.2em}
.legend span{display:inline-block;margin-right:1em}
.swatch{width:.9em;height:.9em;display:inline-block}
"""


def _ms(seconds) -> str:
    return "-" if seconds is None else f"{1000 * seconds:.2f} ms"


def _mib(size) -> str:
    return "-" if size is None else f"{size / 2**20:.1f} MiB"


def _breakdown_svg(report: Report, width: int = 900, height: int = 28) -> str:
    parts, x = [], 0.0
    for phase in PHASES:
        w = width * report.breakdown.get(phase, 0.0)
        if w > 0:
            title = f"{phase}: {100 * report.breakdown[phase]:.1f}%"
            parts.append(
                f'<rect x="{x:.1f}" y="0" width="{w:.1f}" height="{height}" '
                f'fill="{COLOURS[phase]}"><title>{escape(title)}</title></rect>'
            )
        x += w
    return f'<svg width="{width}" height="{height}" role="img">{"".join(parts)}</svg>'


def _timeline_svg(report: Report, width: int = 900, height: int = 160) -> str:
    steps = report.run.steps
    if not steps:
        return "<p>No measured steps.</p>"
    tallest = max(s.wall_s for s in steps) or 1.0
    bar = width / len(steps)
    parts = []
    for i, step in enumerate(steps):
        y = float(height)
        for phase in PHASES:
            h = height * step.phases.get(phase, 0.0) / tallest
            if h <= 0:
                continue
            y -= h
            title = f"step {step.index} {phase}: {_ms(step.phases[phase])}"
            parts.append(
                f'<rect x="{i * bar:.1f}" y="{y:.1f}" width="{max(bar - 1, 1):.1f}" '
                f'height="{h:.1f}" fill="{COLOURS[phase]}"><title>{escape(title)}</title></rect>'
            )
    return f'<svg width="{width}" height="{height}" role="img">{"".join(parts)}</svg>'


def _legend(report: Report) -> str:
    items = [
        f'<span><span class="swatch" style="background:{COLOURS[p]}"></span> {p} '
        f"{100 * report.breakdown.get(p, 0.0):.0f}% ({_ms(report.phase_seconds.get(p))})</span>"
        for p in PHASES
    ]
    return f'<div class="legend">{"".join(items)}</div>'


def _findings(report: Report) -> str:
    if not report.findings:
        return "<p>No findings.</p>"
    blocks = []
    for f in report.findings:
        evidence = "".join(f"<li>{escape(e)}</li>" for e in f.evidence)
        blocks.append(
            f'<div class="finding"><b>{escape(f.id)} [{escape(f.severity)}] {escape(f.title)}</b>'
            f" &mdash; {escape(saving_words(f))}<ul>{evidence}</ul>"
            f"<pre>{escape(f.fix)}</pre><small>source: {escape(f.source)}</small></div>"
        )
    return "".join(blocks)


def _rows(pairs) -> str:
    return "".join(f"<tr><th>{escape(k)}</th><td>{escape(str(v))}</td></tr>" for k, v in pairs)


def render_html(report: Report) -> str:
    run, memory, env = report.run, report.run.memory, report.run.environment
    summary = [
        ("status", run.status), ("exit code", run.exit_code),
        ("measured steps", 0 if run.warmup_only else len(run.steps)),
        ("warm-up steps", len(run.steps) if run.warmup_only else run.warmup_steps),
        ("median step", _ms(report.step_time_s)),
        ("samples/s", "-" if report.samples_per_s is None else f"{report.samples_per_s:.0f}"),
        ("device", f"{env.device_type} {env.device_name}"), ("torch", env.torch_version),
    ]  # fmt: skip
    memory_rows = [
        ("source", memory.source), ("peak", _mib(memory.peak_bytes)),
        ("capacity", _mib(memory.capacity_bytes)), ("parameters", _mib(memory.parameter_bytes)),
        ("optimizer state", _mib(memory.optimizer_state_bytes)),
        ("activations (estimate)", _mib(memory.activations_bytes)),
    ]  # fmt: skip
    notes = "".join(f"<li>{escape(n)}</li>" for n in [*report.step_notes, *run.notes])
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>torchdoctor diagnose {escape(run.target)}</title>
<style>{CSS}</style></head><body>
<h1>torchdoctor diagnose {escape(run.target)}</h1>
<p class="verdict">{escape(report.verdict)}</p>
<table>{_rows(summary)}</table>
<h2>Step-time breakdown</h2>{_breakdown_svg(report)}{_legend(report)}
<h2>Step timeline</h2>{_timeline_svg(report)}
<h2>Memory</h2><table>{_rows(memory_rows)}</table>
<h2>Findings</h2>{_findings(report)}
<h2>Notes</h2><ul>{notes}</ul>
<p><small>report schema {escape(report.schema_version)}</small></p>
</body></html>
"""


def write_html(report: Report, path: str | Path) -> None:
    Path(path).write_text(render_html(report), encoding="utf-8")
