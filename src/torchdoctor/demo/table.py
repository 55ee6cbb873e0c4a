"""The demo's before/after table: speedups from the measured rows, a terminal table, the JSON.

JSON schema (version 2), written by `torchdoctor demo --json FILE`:

    {"schema_version": 2, "tool": "torchdoctor demo", "version": str,
     "recipe": str, "device": str, "torch": str, "cores": int, "intra_op_threads": int,
     "epochs": int, "train_samples_per_epoch": int, "val_samples": int,
     "memory_kind": "process_rss" | "cuda_allocated",
     "diagnosis": {"available": bool, "error": str | null, "verdict": str | null,
                   "findings": [{"id", "title", "severity", "saving"}]},
     "rows": [{"key", "name", "label", "source", "changes_semantics": str | null, "dataset",
               "config": {...TrainerConfig fields...}, "epochs", "train_samples",
               "wall_s", "epoch_times_s": [float], "first_epoch_s": float | null,
               "epoch_s", "epoch_spread", "samples_per_s", "peak_memory_bytes": int | null,
               "final_accuracy": float | null, "speedup_vs_naive", "step_speedup"}]}

Times in seconds, memory in bytes. epoch_s is the steady state: the median of epoch_times_s
after the first (the one epoch with --quick); epoch_spread = (slowest - fastest) / median of
those epochs; samples_per_s = train_samples / epoch_s. speedup_vs_naive = naive epoch_s / row
epoch_s, step_speedup = previous row's epoch_s / this row's epoch_s (1.0 for the naive row).
Version 2 (from 1): epoch_s was wall_s / epochs; epoch_times_s, first_epoch_s, epoch_spread added.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from rich.table import Table

from torchdoctor.demo.notes import measurement_rule, slowdown_notes
from torchdoctor.demo.rows import RowResult
from torchdoctor.errors import TorchdoctorError

SCHEMA_VERSION = 2


def add_speedups(rows: list[RowResult]) -> None:
    for index, row in enumerate(rows):
        row.speedup_vs_naive = rows[0].epoch_s / row.epoch_s
        row.step_speedup = rows[index - 1].epoch_s / row.epoch_s if index else 1.0


def _mib(size: int | None) -> str:
    return "-" if size is None else f"{size / 2**20:.0f} MiB"


def _accuracy(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def render_table(rows: list[RowResult], title: str) -> Table:
    table = Table(title=title, title_justify="left", box=None, pad_edge=False)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("technique", min_width=20)
    # speedup: against the naive loop; this step: against the row above
    for name in ("s/epoch", "img/s", "peak mem", "val acc", "speedup", "this step"):
        table.add_column(name, justify="right", no_wrap=True)
    for number, row in enumerate(rows):
        label = row.name + (" [*]" if row.changes_semantics else "")
        table.add_row(
            str(number),
            label,
            f"{row.epoch_s:.2f}",
            f"{row.samples_per_s:,.0f}",
            _mib(row.peak_memory_bytes),
            _accuracy(row.final_accuracy),
            f"{row.speedup_vs_naive:.2f}x",
            f"{row.step_speedup:.2f}x",
        )
    return table


def footnotes(rows: list[RowResult]) -> list[str]:
    return [f"[*] {row.changes_semantics} (seed 001)" for row in rows if row.changes_semantics]


def caveats(rows: list[RowResult], quick: bool, cores: int = 2) -> list[str]:
    """Lines under the table: how rows are measured, and never a slowdown without its reason."""
    if not rows:
        return []
    if quick:
        return [
            measurement_rule(rows[0].epochs),
            f"note: quick runs are too short to measure: {rows[0].train_samples} samples x "
            f"{rows[0].epochs} epoch(s) are dominated by fixed start-up costs (worker "
            "processes, first allocations), so techniques can show as slowdowns; run "
            "without --quick for real numbers",
        ]
    return [measurement_rule(rows[0].epochs)] + slowdown_notes(rows, cores)


def row_dict(row: RowResult) -> dict[str, Any]:
    return {
        "key": row.key,
        "name": row.name,
        "label": row.label,
        "source": row.source,
        "changes_semantics": row.changes_semantics,
        "dataset": row.dataset,
        "config": row.config,
        "epochs": row.epochs,
        "train_samples": row.train_samples,
        "wall_s": row.wall_s,
        "epoch_times_s": row.epoch_times_s,
        "first_epoch_s": row.first_epoch_s,
        "epoch_s": row.epoch_s,
        "epoch_spread": row.spread,
        "samples_per_s": row.samples_per_s,
        "peak_memory_bytes": row.peak_memory_bytes,
        "final_accuracy": row.final_accuracy,
        "speedup_vs_naive": row.speedup_vs_naive,
        "step_speedup": row.step_speedup,
    }


def write_json(path: str | Path, header: dict[str, Any], rows: list[RowResult]) -> None:
    document = {"schema_version": SCHEMA_VERSION, **header, "rows": [row_dict(r) for r in rows]}
    text = json.dumps(_finite(document), indent=2) + "\n"
    target = Path(path)
    tmp = target.with_name(f".{target.name}.tmp")
    try:
        tmp.write_text(text)
        tmp.replace(target)  # a reader never sees half a file
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise TorchdoctorError(f"cannot write {target}: {exc.strerror or exc}") from exc


def _finite(value):
    """JSON has no NaN/inf: such numbers become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value
