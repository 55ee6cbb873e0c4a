"""Speedups are ratios of measured epoch times; the JSON never holds NaN."""

from __future__ import annotations

import json

import pytest

from torchdoctor.demo.rows import RowResult
from torchdoctor.demo.table import add_speedups, caveats, footnotes, render_table, write_json


def row(key, wall_s, semantics=None):
    return RowResult(
        key=key,
        name=key,
        label=key,
        source="seed",
        changes_semantics=semantics,
        dataset="per_item",
        config={},
        epochs=2,
        train_samples=100,
        wall_s=wall_s,
        peak_memory_bytes=None,
        final_accuracy=float("nan"),
    )


def test_epoch_s_is_the_median_of_the_epochs_after_the_first():
    timed = row("a", 99.0)
    timed.epochs, timed.epoch_times_s = 4, [9.0, 2.0, 3.0, 2.5]
    assert timed.epoch_s == 2.5 and timed.first_epoch_s == 9.0
    assert timed.samples_per_s == pytest.approx(40.0)
    assert timed.spread == pytest.approx((3.0 - 2.0) / 2.5)
    one = row("b", 99.0)
    one.epoch_times_s = [1.5]  # --quick: the one epoch is all there is
    assert one.epoch_s == 1.5 and one.spread == 0.0


def test_speedups_against_naive_and_previous_row():
    rows = [row("naive", 8.0), row("a", 4.0), row("b", 5.0, "batch changes things")]
    add_speedups(rows)
    assert [r.speedup_vs_naive for r in rows] == [1.0, 2.0, 1.6]
    assert [r.step_speedup for r in rows] == [1.0, 2.0, 0.8]
    assert rows[1].epoch_s == 2.0 and rows[1].samples_per_s == pytest.approx(50.0)
    assert footnotes(rows) == ["[*] batch changes things (seed 001)"]
    assert render_table(rows, "t").row_count == 3


def test_json_has_no_nan_and_is_replaced_whole(tmp_path):
    rows = [row("naive", 2.0)]
    add_speedups(rows)
    target = tmp_path / "demo.json"
    target.write_text("old")
    write_json(target, {"recipe": "shapes"}, rows)
    document = json.loads(target.read_text())
    assert document["schema_version"] == 2 and document["recipe"] == "shapes"
    assert document["rows"][0]["final_accuracy"] is None
    assert document["rows"][0]["speedup_vs_naive"] == 1.0
    assert list(tmp_path.iterdir()) == [target]


def test_quick_runs_say_they_are_too_short_to_measure():
    rows = [row("naive", 8.0), row("workers", 10.0)]
    rows[0].epochs = rows[1].epochs = 1
    add_speedups(rows)
    rule, quick = caveats(rows, quick=True)
    assert rule.startswith("s/epoch: the row's one epoch")
    assert quick.startswith("note: quick runs are too short to measure") and "100 samples" in quick


def test_full_runs_print_the_measurement_rule_and_every_slowdown():
    rows = [row("naive", 8.0), row("a", 4.0)]
    rows[0].epoch_times_s, rows[1].epoch_times_s = [5.0, 4.0, 4.2], [3.0, 2.0, 2.1]
    rows[0].epochs = rows[1].epochs = 3
    add_speedups(rows)
    assert caveats(rows, quick=False) == [
        "s/epoch: median of epochs 2-3 of each row (training + evaluation); epoch 1 (DataLoader "
        "worker start-up, warm-up) is left out and reported as first_epoch_s in --json; img/s: "
        "training images / s/epoch."
    ]
