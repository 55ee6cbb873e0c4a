"""SVG charts for the HTML report: axes with units, stacked step bars, lines. Layout only: every
number drawn comes from the report (renderers never compute the diagnosis)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from html import escape

# Okabe-Ito: distinguishable with the common colour-vision deficiencies, and in greyscale order
COLOURS = {
    "data": "#D55E00",  # vermillion
    "h2d": "#CC79A7",  # reddish purple
    "forward": "#009E73",  # bluish green
    "backward": "#0072B2",  # blue
    "optimizer": "#E69F00",  # orange
    "other": "#7F7F7F",  # grey
}
LINE_COLOURS = ("#000000", "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9")
LEFT, RIGHT, TOP, BOTTOM = 64, 12, 12, 40  # plot margins (px): room for the axis labels


def nice_top(value: float) -> float:
    """The smallest 1, 2, 2.5 or 5 x 10^k at or above `value` (a round axis maximum)."""
    if value <= 0 or not math.isfinite(value):
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if step * power >= value * (1 - 1e-9):
            return step * power
    return 10 * power


def _number(value: float) -> str:
    return f"{value:.3g}"


def axes(
    width: int,
    height: int,
    top: float,
    x_labels: Sequence[tuple[float, str]],
    y_unit: str,
    x_unit: str,
) -> list[str]:
    """Grid lines, tick labels and axis titles; the plot spans LEFT..width-RIGHT, TOP..height-BOTTOM."""
    plot_h = height - TOP - BOTTOM
    parts = []
    for i in range(5):
        value = top * i / 4
        y = height - BOTTOM - plot_h * i / 4
        parts.append(
            f'<line x1="{LEFT}" y1="{y:.1f}" x2="{width - RIGHT}" y2="{y:.1f}" class="grid"/>'
            f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{_number(value)}</text>'
        )
    for x, label in x_labels:
        parts.append(
            f'<text x="{x:.1f}" y="{height - BOTTOM + 16}" text-anchor="middle">{escape(label)}</text>'
        )
    parts.append(
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{height - BOTTOM}" class="axis"/>'
        f'<line x1="{LEFT}" y1="{height - BOTTOM}" x2="{width - RIGHT}" y2="{height - BOTTOM}" '
        'class="axis"/>'
        f'<text x="14" y="{TOP + plot_h / 2:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 14 {TOP + plot_h / 2:.1f})">{escape(y_unit)}</text>'
        f'<text x="{(LEFT + width - RIGHT) / 2:.1f}" y="{height - 4}" text-anchor="middle">'
        f"{escape(x_unit)}</text>"
    )
    return parts


def _tick_every(count: int, room: int = 12) -> int:
    return max(1, math.ceil(count / room))


def stacked_steps(
    steps: Sequence[tuple[str, dict[str, float]]],
    order: Sequence[str],
    label: str,
    width: int = 900,
    height: int = 240,
) -> str:
    """One bar per step (label, phase -> seconds), phases stacked in `order`, in milliseconds."""
    if not steps:
        return "<p>No measured steps.</p>"
    tallest = max(sum(phases.values()) for _, phases in steps) * 1000
    top = nice_top(tallest)
    plot_w, plot_h = width - LEFT - RIGHT, height - TOP - BOTTOM
    bar = plot_w / len(steps)
    every = _tick_every(len(steps))
    ticks = [(LEFT + (i + 0.5) * bar, name) for i, (name, _) in enumerate(steps) if i % every == 0]
    parts = axes(width, height, top, ticks, "milliseconds per step", "measured step")
    for i, (name, phases) in enumerate(steps):
        y = float(height - BOTTOM)
        for phase in order:
            ms = 1000 * phases.get(phase, 0.0)
            h = plot_h * ms / top
            if h <= 0:
                continue
            y -= h
            parts.append(
                f'<rect x="{LEFT + i * bar + 0.5:.1f}" y="{y:.1f}" width="{max(bar - 1, 1):.1f}" '
                f'height="{h:.1f}" fill="{COLOURS[phase]}">'
                f"<title>step {escape(name)} {phase}: {ms:.2f} ms</title></rect>"
            )
    return _svg(width, height, label, parts)


def lines(
    series: Sequence[tuple[str, Sequence[float | None]]],
    label: str,
    y_unit: str,
    x_unit: str,
    x_names: Sequence[str] | None = None,
    scale: Callable[[float], float] = lambda v: v,
    width: int = 900,
    height: int = 220,
) -> str:
    """Line chart: each series (name, values by index); None values leave a gap."""
    values = [scale(v) for _, ys in series for v in ys if v is not None and math.isfinite(v)]
    count = max((len(ys) for _, ys in series), default=0)
    if not values or count == 0:
        return "<p>No data.</p>"
    low = min(0.0, min(values))
    top = nice_top(max(values) - low)
    plot_w, plot_h = width - LEFT - RIGHT, height - TOP - BOTTOM
    step = plot_w / max(count - 1, 1)
    names = list(x_names) if x_names is not None else [str(i) for i in range(count)]
    every = _tick_every(count)
    ticks = [(LEFT + i * step, names[i]) for i in range(0, min(count, len(names)), every)]
    parts = axes(width, height, top, ticks, y_unit, x_unit)
    legend = []
    for index, (name, ys) in enumerate(series):
        colour = LINE_COLOURS[index % len(LINE_COLOURS)]
        dash = "" if index == 0 else f' stroke-dasharray="{2 + 2 * (index % 3)},2"'
        runs: list[list[str]] = []  # unbroken stretches of points (None values break a line)
        current: list[str] = []
        for i, v in enumerate(ys):
            if v is None or not math.isfinite(v):
                runs, current = (runs + [current] if current else runs), []
                continue
            y = height - BOTTOM - plot_h * (scale(v) - low) / top
            current.append(f"{LEFT + i * step:.1f},{y:.1f}")
        runs = runs + [current] if current else runs
        for run in runs:
            parts.append(
                f'<polyline points="{" ".join(run)}" fill="none" stroke="{colour}" '
                f'stroke-width="2"{dash}><title>{escape(name)}</title></polyline>'
            )
        legend.append(
            f'<span><svg width="22" height="8" aria-hidden="true"><line x1="0" y1="4" x2="22" '
            f'y2="4" stroke="{colour}" stroke-width="2"{dash}/></svg> {escape(name)}</span>'
        )
    chart = _svg(width, height, label, parts)
    return chart + (f'<div class="legend">{"".join(legend)}</div>' if len(series) > 1 else "")


def _svg(width: int, height: int, label: str, parts: list[str]) -> str:
    return (
        f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(label)}"><title>{escape(label)}</title>{"".join(parts)}</svg>'
    )
