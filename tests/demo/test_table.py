"""Speedups are ratios of measured epoch times; the JSON never holds NaN."""

from __future__ import annotations

import json

import pytest

from torchdoctor.demo.rows import RowResult
from torchdoctor.demo.table import add_speedups, caveats, footnotes, render_table, write_json


def row(key, wall_s, semantics=None):
    return RowResult(key=key, name=key, label=key, source="seed", changes_semantics=semantics,
                     dataset="per_item", config={}, epochs=2, train_samples=100, wall_s=wall_s,
                     peak_memory_bytes=None, final_accuracy=float("nan"))


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
    assert document["schema_version"] == 1 and document["recipe"] == "shapes"
    assert document["rows"][0]["final_accuracy"] is None
    assert document["rows"][0]["speedup_vs_naive"] == 1.0
    assert list(tmp_path.iterdir()) == [target]


def test_a_slowdown_is_never_shown_without_its_reason():
    rows = [row("naive", 8.0), row("workers", 10.0), row("compile", 5.0)]
    add_speedups(rows)
    (slower,) = caveats(rows, quick=False)
    assert "costs more than it saves" in slower and "workers (0.80x)" in slower
    assert "compile" not in slower
    (quick,) = caveats(rows, quick=True)
    assert quick.startswith("note: quick runs are too short to measure") and "100 samples" in quick
    faster = [row("naive", 8.0), row("a", 4.0)]
    add_speedups(faster)
    assert caveats(faster, quick=False) == []
