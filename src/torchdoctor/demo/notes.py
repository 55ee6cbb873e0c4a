"""The lines printed under the demo's table: how rows are measured, and why a row is slower.

A user must never be shown an unexplained slowdown: every row whose speedup (against the naive
loop or against the row above) is below 1 gets one line that says, from this run's numbers,
where the cost comes from. Pure functions of the measured rows.
"""

from __future__ import annotations

from torchdoctor.demo.rows import RowResult


def measurement_rule(epochs: int) -> str:
    if epochs < 2:
        return (
            "s/epoch: the row's one epoch (training + evaluation), start-up included; "
            "img/s: training images / s/epoch."
        )
    steady = f"median of epochs 2-{epochs}" if epochs > 2 else "epoch 2"
    return (
        f"s/epoch: {steady} of each row (training + evaluation); epoch 1 "
        "(DataLoader worker start-up, warm-up) is left out and reported as first_epoch_s "
        "in --json; img/s: training images / s/epoch."
    )


def _noise(row: RowResult, reference: RowResult) -> float:
    return max(row.spread, reference.spread)


def step_reason(rows: list[RowResult], index: int, cores: int) -> str:
    """Why row `index` is slower than the row above it, from this run's measurements."""
    row, above = rows[index], rows[index - 1]
    loss = 1 - row.step_speedup
    noise = _noise(row, above)
    if row.key == "workers":
        workers = row.config.get("workers")
        first = row.first_epoch_s
        started = f"; its first epoch took {first:.2f} s with worker start-up" if first else ""
        return (
            f"{workers} DataLoader worker process(es) and the training process share "
            f"{cores} CPU core(s): workers compete with compute for {cores} cores; on a GPU "
            f"machine they overlap (here {100 * loss:.0f}% slower per epoch{started})"
        )
    if loss <= noise:
        return (
            f"{100 * loss:.0f}% slower, within this run's noise (epochs of these rows "
            f"vary by up to {100 * noise:.0f}%)"
        )
    return (
        f"{100 * loss:.0f}% slower, beyond its epoch-to-epoch noise ({100 * noise:.0f}%): "
        f"the machine's load changed or the change costs here; rerun to confirm"
    )


def slowdown_notes(rows: list[RowResult], cores: int) -> list[str]:
    """One line per row whose speedup vs the naive loop or vs the row above is below 1."""
    notes = []
    for index, row in enumerate(rows[1:], start=1):
        slower_steps = [j for j in range(1, index + 1) if rows[j].step_speedup < 1]
        if row.speedup_vs_naive >= 1 and row.step_speedup >= 1:
            continue
        if row.step_speedup < 1:
            why = step_reason(rows, index, cores)
        elif not slower_steps:  # rounding: the product of the steps is 1
            why = "as fast as the naive loop within rounding"
        else:
            why = "faster than the row above, still paying for " + ", ".join(
                f"row {j} ({rows[j].step_speedup:.2f}x)" for j in slower_steps
            )
        notes.append(
            f"row {index} ({row.speedup_vs_naive:.2f}x vs naive, "
            f"{row.step_speedup:.2f}x this step): {why}"
        )
    return notes
