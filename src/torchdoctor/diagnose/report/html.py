"""`--html FILE`: one self-contained page (inline CSS and SVG, no scripts, no links, no network):
the verdict, the step-time breakdown, the per-step timeline with a time axis, memory over the
steps, the sampled step's top ops, the findings with the user's source lines around them, the
`--try` table with loss curves of the baseline and each fix, and how to open the trace.

`render_fragment` is the same content for a notebook cell (`Report._repr_html_`), its styles
scoped to the report's own element.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from torchdoctor.diagnose.observations import PHASES
from torchdoctor.diagnose.report.html_charts import COLOURS, lines, stacked_steps
from torchdoctor.diagnose.report.html_trials import trials_section
from torchdoctor.diagnose.report.lines_render import html_lines
from torchdoctor.diagnose.report.memory_render import memory_html
from torchdoctor.diagnose.report.model import Report, saving_words

CSS = """
.td{font-family:system-ui,sans-serif;max-width:960px;color:#222;line-height:1.4}
.td h1{font-size:1.4em}.td h2{font-size:1.1em;margin-top:1.6em}
.td .verdict{font-size:1.1em;font-weight:600;padding:.6em;background:#f4f4f4;
 border-left:4px solid #333}
.td table{border-collapse:collapse}
.td td,.td th{padding:2px 10px;text-align:left;border-bottom:1px solid #ddd}
.td td.num{text-align:right;font-variant-numeric:tabular-nums}
.td pre{background:#f6f8fa;padding:.6em;overflow-x:auto;margin:.4em 0}
.td .finding{margin-bottom:1.4em}
.td .legend span{display:inline-block;margin-right:1.2em}
.td .swatch{width:.9em;height:.9em;display:inline-block;vertical-align:middle}
.td svg text{font-size:11px;fill:#333}.td .grid{stroke:#e4e4e4}.td .axis{stroke:#555}
.td .src .at{background:#fff3c4}.td .src .n{color:#888;user-select:none}
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
    return (
        f'<svg width="{width}" height="{height}" role="img" '
        f'aria-label="share of the median step by phase">{"".join(parts)}</svg>'
    )


def _legend(report: Report) -> str:
    items = [
        f'<span><span class="swatch" style="background:{COLOURS[p]}"></span> {p} '
        f"{100 * report.breakdown.get(p, 0.0):.0f}% ({_ms(report.phase_seconds.get(p))})</span>"
        for p in PHASES
    ]
    return f'<div class="legend">{"".join(items)}</div>'


def _timeline(report: Report) -> str:
    steps = [(str(s.index), s.phases) for s in report.run.steps]
    chart = stacked_steps(steps, PHASES, "milliseconds per measured step, by phase")
    return chart + (_legend(report) if steps else "")


def _memory(report: Report) -> str:
    memory, steps = report.run.memory, report.run.steps
    rows = [
        ("source", memory.source), ("peak", _mib(memory.peak_bytes)),
        ("capacity", _mib(memory.capacity_bytes)), ("parameters", _mib(memory.parameter_bytes)),
        ("optimizer state", _mib(memory.optimizer_state_bytes)),
        ("activations (estimate)", _mib(memory.activations_bytes)),
    ]  # fmt: skip
    table = f"<table>{_rows(rows)}</table>"
    per_step = [s.memory_bytes for s in steps]
    if not any(value is not None for value in per_step):
        return table + "<p>No per-step memory was recorded.</p>"
    what = "CUDA memory allocated" if memory.source == "cuda_allocator" else "process memory (RSS)"
    chart = lines(
        [(what, per_step)],
        f"{what} at the end of each measured step",
        "MiB",
        "measured step",
        x_names=[str(s.index) for s in steps],
        scale=lambda b: b / 2**20,
    )
    return table + f"<p>{escape(what)} at the end of each measured step:</p>" + chart


def _top_ops(report: Report) -> str:
    ops = report.run.compute.top_ops
    if not ops:
        return "<p>No op counts (the sampled step was not counted: torch.compile, or no step).</p>"
    rows = "".join(
        f"<tr><td>{escape(op.op)}</td><td class='num'>{op.count}</td>"
        f"<td class='num'>{'-' if not op.flops else f'{op.flops / 1e6:,.1f}'}</td></tr>"
        for op in ops
    )
    return (
        "<p>Ops dispatched in the sampled step (a warm-up step counted op by op), most frequent "
        "first:</p><table><tr><th>op</th><th>calls</th><th>MFLOP</th></tr>" + rows + "</table>"
    )


def _source(report: Report, location: str) -> str:
    lines_ = report.source_lines.get(location)
    if not lines_:
        return ""
    at = int(location.rsplit(":", 1)[1])
    body = "".join(
        f'<span class="{"at" if number == at else ""}"><span class="n">{number:>5} </span>'
        f"{escape(text)}</span>\n"
        for number, text in lines_
    )
    return f'<div>{escape(location)}</div><pre class="src">{body}</pre>'


def _findings(report: Report) -> str:
    from torchdoctor.diagnose.report.builder import finding_locations

    if not report.findings:
        return "<p>No findings.</p>"
    blocks = []
    rows = report.finding_lines if len(report.finding_lines) == len(report.findings) else None
    for index, f in enumerate(report.findings):
        evidence = "".join(f"<li>{escape(e)}</li>" for e in f.evidence)
        where = "".join(_source(report, loc) for loc in finding_locations(f)[:1])
        lines = html_lines(rows[index]) if rows else ""
        blocks.append(
            f'<div class="finding"><b>{escape(f.id)} [{escape(f.severity)}] {escape(f.title)}</b>'
            f" &mdash; {escape(saving_words(f))}"
            f"<ul>{evidence}</ul>{where}{lines}<div>fix:</div><pre>{escape(f.fix)}</pre>"
            f"<small>source: {escape(f.source)}</small></div>"
        )
    return "".join(blocks)


TRACE_HELP = (
    "<p>Each step's phases as a timeline: rerun with <code>--trace FILE</code>, then open "
    "<b>ui.perfetto.dev</b> in a browser, choose <i>Open trace file</i> and pick FILE (or open "
    "<b>chrome://tracing</b> and <i>Load</i> it). The trace never leaves your machine: Perfetto "
    "reads it in the browser.</p>"
)


def _rows(pairs) -> str:
    return "".join(f"<tr><th>{escape(k)}</th><td>{escape(str(v))}</td></tr>" for k, v in pairs)


def render_fragment(report: Report) -> str:
    """The report as one <div> with its own scoped styles (a notebook cell, or the page body)."""
    run, env = report.run, report.run.environment
    summary = [
        ("status", run.status), ("exit code", run.exit_code),
        ("measured steps", 0 if run.warmup_only else len(run.steps)),
        ("warm-up steps", len(run.steps) if run.warmup_only else run.warmup_steps),
        ("median step", _ms(report.step_time_s)),
        ("samples/s", "-" if report.samples_per_s is None else f"{report.samples_per_s:.0f}"),
        ("device", f"{env.device_type} {env.device_name}"), ("torch", env.torch_version),
    ]  # fmt: skip
    notes = "".join(f"<li>{escape(n)}</li>" for n in [*report.step_notes, *run.notes])
    return f"""<div class="td"><style>{CSS}</style>
<h1>torchdoctor diagnose {escape(run.target)}</h1>
<p class="verdict">{escape(report.verdict)}</p>{html_lines(report.verdict_lines)}
<table>{_rows(summary)}</table>
<h2>Step-time breakdown (median step)</h2>{_breakdown_svg(report)}{_legend(report)}
<h2>Step timeline</h2>{_timeline(report)}
<h2>Memory</h2>{_memory(report)}{memory_html(report.memory)}
<h2>Findings</h2>{_findings(report)}
{trials_section(report.trials)}
<h2>Top ops of the sampled step</h2>{_top_ops(report)}
<h2>Trace</h2>{TRACE_HELP}
<h2>Notes</h2><ul>{notes}</ul>
<p><small>report schema {escape(report.schema_version)}</small></p>
</div>"""


def render_html(report: Report) -> str:
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>torchdoctor diagnose {escape(report.run.target)}</title></head>
<body style="margin:2em auto;max-width:960px">
{render_fragment(report)}
</body></html>
"""


def write_html(report: Report, path: str | Path) -> None:
    Path(path).write_text(render_html(report), encoding="utf-8")
