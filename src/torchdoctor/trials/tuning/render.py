"""Terminal tables and JSON for a TuneReport (formatting only)."""

from __future__ import annotations

import json

from rich.table import Table

from torchdoctor.trials.tuning.tune import TuneReport


def _num(value, fmt: str = "{:,.0f}") -> str:
    return "-" if value is None else fmt.format(value)


def _mib(value) -> str:
    return "-" if value is None else f"{value / 2**20:,.0f} MiB"


def batch_line(report: TuneReport) -> str:
    batch = report.batch
    if batch is None:
        return "batch size: not searched"
    probes = ", ".join(f"{size}{'' if ok else ' (OOM)'}" for size, ok in batch.probes)
    if batch.largest_fit is None:
        return f"batch size: even {batch.probes[0][0]} does not fit (tried {probes})"
    bound = (
        f"first failure at {batch.first_failure}"
        if batch.memory_bound
        else f"search limit {batch.limit} reached"
    )
    line = (
        f"largest batch that fits: {batch.largest_fit} ({bound}); recommended with a "
        f"{batch.margin:.0%} margin: {batch.recommended}  [tried {probes}]"
    )
    plan = report.accumulation
    if plan is not None:
        line += (
            f"\nglobal batch {plan.global_batch}: micro-batch {plan.micro_batch} x "
            f"{plan.accumulate} accumulation steps = {plan.effective_batch} per update"
        )
    return line


def _range(rates: list[float]) -> str:
    """The spread of the repeats, e.g. "1,210-1,380 (3)"."""
    if len(rates) < 2:
        return "-"
    return f"{min(rates):,.0f}-{max(rates):,.0f} ({len(rates)})"


def _speedup(row) -> str:
    if row.speedup is None:
        return "-"
    if row.spread is None or len(row.rates) < 2:
        return f"{row.speedup:.2f}x"
    return f"{row.speedup:.2f}x ({row.spread[0]:.2f}-{row.spread[1]:.2f})"


def workers_table(report: TuneReport) -> Table:
    table = Table(title="DataLoader workers (persistent, prefetch_factor=2)")
    for column in ("workers", "samples/s (median)", "range (repeats)", "data wait share"):
        table.add_column(column)
    for point in report.workers:
        r = point.result
        mark = " <- best" if point.workers == report.best_workers else ""
        share = "-" if r.data_wait_share is None else f"{r.data_wait_share:.0%}"
        table.add_row(f"{point.workers}{mark}", _num(r.samples_per_s), _range(point.rates), share)
    return table


def ablation_table(report: TuneReport) -> Table:
    table = Table(
        title="Performance stack, one technique added per row, same steps from the same weights"
    )
    for column in (
        "configuration",
        "samples/s (median)",
        "speedup (range)",
        "peak memory",
        "val accuracy",
        "train loss",
    ):
        table.add_column(column)
    rows = report.ablation.cumulative + report.ablation.leave_one_out
    for row in rows:
        r = row.result
        if not r.ok:
            table.add_row(row.label, r.error or "failed", "-", "-", "-", "-")
            continue
        table.add_row(
            row.label,
            _num(r.samples_per_s),
            _speedup(row),
            _mib(r.peak_memory_bytes),
            _num(r.val_accuracy, "{:.1%}"),
            _num(r.train_loss, "{:.4f}"),
        )
    return table


def render_terminal(report: TuneReport, console) -> None:
    console.print(f"tune {report.recipe} on {report.device}")
    console.print(batch_line(report), markup=False)
    if report.workers:
        console.print(workers_table(report))
    console.print(ablation_table(report))
    for stage in report.ablation.stages:
        if stage.skipped:
            console.print(f"{stage.name}: skipped: {stage.skipped}", markup=False)
    console.print(f"chosen stack: {', '.join(report.chosen_stages) or 'none'}", markup=False)
    for note in report.notes:
        console.print(note, markup=False)


def render_json(report: TuneReport) -> str:
    return json.dumps(report.to_dict(), indent=2, default=str)
