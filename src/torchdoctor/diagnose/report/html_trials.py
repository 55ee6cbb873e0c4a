"""The `--try` part of the HTML report: one row per fix (speedup with its spread, throughput,
memory, what the loss trajectory says) and the loss curves of the baseline and each fix over the
same steps. Reads the TrialReport's dict (trials/report.py) as it is; computes nothing."""

from __future__ import annotations

from html import escape

from torchdoctor.diagnose.report.html_charts import lines


def _ratio(value) -> str:
    return "-" if value is None else f"{value:.2f}x"


def _speedup(spread) -> str:
    if not spread or spread.get("median") is None:
        return "-"
    text = f"{spread['median']:.2f}x"
    if spread.get("count", 0) > 1 and spread.get("low") is not None:
        text += f" ({spread['low']:.2f}-{spread['high']:.2f})"
    return text


def _change(value) -> str:
    return "-" if value is None else f"{100 * value:+.0f}%"


def trials_section(trials: dict | None) -> str:
    if not trials:
        return ""
    head = (
        "<tr><th>configuration</th><th>verdict</th><th>speedup (range)</th>"
        "<th>throughput</th><th>peak memory</th><th>loss trajectory</th></tr>"
    )
    rows, curves = [], [("baseline", trials["baseline"].get("losses") or [])]
    for variant in trials.get("variants", []):
        config, semantics = variant["config"], variant.get("semantics") or {}
        rows.append(
            f"<tr><td>{escape(config['name'])}</td><td>{escape(variant['verdict'])}</td>"
            f"<td class='num'>{_speedup(variant.get('speedup'))}</td>"
            f"<td class='num'>{_ratio(variant.get('throughput_ratio'))}</td>"
            f"<td class='num'>{_change(variant.get('memory_change'))}</td>"
            f"<td>{escape(semantics.get('verdict', '-'))}</td></tr>"
        )
        curves.append((config["name"], config.get("losses") or []))
    skipped = "".join(
        f"<li>{escape(name)}: {escape(why)}</li>"
        for name, why in (trials.get("not_applicable") or {}).items()
    )
    chart = lines(curves, "training loss per step: baseline and each fix", "loss", "measured step")
    return (
        f"<h2>--try: fixes measured on your program</h2>"
        f"<p>{trials.get('repeats', '?')} interleaved runs per configuration, "
        f"{trials.get('steps', '?')} steps each, the same seed.</p>"
        f"<table>{head}{''.join(rows)}</table>"
        + (f"<p>Not tried:</p><ul>{skipped}</ul>" if skipped else "")
        + "<p>Loss of the first run of each configuration, step by step (the same curve means "
        "the fix kept what the script computes):</p>" + chart
    )
