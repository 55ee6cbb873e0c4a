"""The memory section of the terminal and HTML reports, laid out from the builder's MemoryView
(nothing is computed here)."""

from __future__ import annotations

from html import escape

from torchdoctor.diagnose.report.memory_view import MemoryView


def size(n_bytes: float | None) -> str:
    if n_bytes is None:
        return "-"
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n_bytes) >= scale:
            return f"{n_bytes / scale:.1f} {unit}"
    return f"{n_bytes:.0f} B"


def _signed(n_bytes: int | None) -> str:
    if n_bytes is None:
        return ""
    return ("+" if n_bytes >= 0 else "-") + size(abs(n_bytes))


def _point_text(point) -> str:
    text = point.label + " " + size(point.allocated_bytes)
    if point.change_bytes is not None:
        text += f" ({_signed(point.change_bytes)})"
    if point.reserved_bytes is not None:
        text += f", reserved {size(point.reserved_bytes)}"
    if point.peak_bytes is not None:
        text += f", peak inside {size(point.peak_bytes)}"
    return text


def memory_lines(view: MemoryView | None) -> list[str]:
    """Plain lines for the terminal report."""
    if view is None:
        return []
    lines = []
    if view.points:
        lines.append(f"memory by phase (step {view.phase_step}, {view.phase_source}):")
        lines.append("   " + " -> ".join(_point_text(p) for p in view.points))
    if view.held:
        lines.append("memory held: " + ", ".join(f"{k} {size(v)}" for k, v in view.held.items()))
    if view.top_modules:
        lines.append(
            "activations by module: "
            + ", ".join(
                f"{m.name} ({m.class_name}) {size(m.bytes)} {100 * m.share:.0f}%"
                for m in view.top_modules
            )
        )
    return lines


def memory_html(view: MemoryView | None) -> str:
    """Per-phase table, what the step holds, activations by module (the memory-per-step chart
    is html._memory's, with axes)."""
    if view is None:
        return ""
    parts = []
    if view.points:
        rows = "".join(
            f"<tr><th>{escape(p.label)}</th><td>{size(p.allocated_bytes)}</td>"
            f"<td>{escape(_signed(p.change_bytes))}</td><td>{size(p.reserved_bytes)}</td>"
            f"<td>{size(p.peak_bytes)}</td></tr>"
            for p in view.points
        )
        parts.append(
            f"<h3>Memory by phase (step {view.phase_step})</h3><p>{escape(view.phase_source)}</p>"
            "<table><tr><th></th><th>in use</th><th>change</th><th>reserved</th>"
            f"<th>peak inside</th></tr>{rows}</table>"
        )
    if view.held:
        rows = "".join(
            f"<tr><th>{escape(k)}</th><td>{size(v)}</td></tr>" for k, v in view.held.items()
        )
        parts.append(f"<h3>What the step holds</h3><table>{rows}</table>")
    if view.top_modules:
        rows = "".join(
            f"<tr><th>{escape(m.name)}</th><td>{escape(m.class_name)}</td><td>{size(m.bytes)}</td>"
            f"<td>{100 * m.share:.0f}%</td></tr>"
            for m in view.top_modules
        )
        parts.append(f"<h3>Activations saved for backward, by module</h3><table>{rows}</table>")
    return "".join(parts)
