"""Every slower row gets one line under the table with its measured reason."""

from __future__ import annotations

from torchdoctor.demo.notes import slowdown_notes
from torchdoctor.demo.rows import RowResult
from torchdoctor.demo.table import add_speedups


def row(key, times, workers=0):
    return RowResult(
        key=key,
        name=key,
        label=key,
        source="seed",
        changes_semantics=None,
        dataset="per_item",
        config={"workers": workers},
        epochs=len(times),
        train_samples=100,
        wall_s=sum(times),
        peak_memory_bytes=None,
        final_accuracy=1.0,
        epoch_times_s=times,
    )


def test_workers_slowdown_names_the_shared_cores():
    rows = [row("naive", [3.0, 2.0, 2.0, 2.0]), row("workers", [4.0, 2.5, 2.5, 2.5], workers=1)]
    add_speedups(rows)
    (note,) = slowdown_notes(rows, cores=2)
    assert note.startswith("row 1 (0.80x vs naive, 0.80x this step): 1 DataLoader worker")
    assert "workers compete with compute for 2 cores; on a GPU machine they overlap" in note
    assert "20% slower per epoch" in note and "first epoch took 4.00 s" in note


def test_small_slowdown_within_the_measured_noise_says_so():
    rows = [row("naive", [3.0, 2.0, 2.6, 2.2]), row("trainer_loop", [3.0, 2.3, 2.4, 2.5])]
    add_speedups(rows)  # naive median 2.2, this row 2.4: 8% slower; naive epochs vary by 27%
    (note,) = slowdown_notes(rows, cores=2)
    assert "8% slower, within this run's noise (epochs of these rows vary by up to 27%)" in note


def test_slowdown_beyond_the_noise_is_not_hidden():
    rows = [row("naive", [3.0, 2.0, 2.0, 2.0]), row("vectorised", [3.0, 3.0, 3.0, 3.0])]
    add_speedups(rows)
    (note,) = slowdown_notes(rows, cores=2)
    assert "33% slower, beyond its epoch-to-epoch noise (0%)" in note


def test_a_later_faster_row_still_names_the_earlier_cost():
    rows = [
        row("naive", [2.0, 2.0, 2.0]),
        row("workers", [4.0, 4.0, 4.0], workers=1),
        row("fused", [3.0, 3.0, 3.0]),
        row("batch", [1.0, 1.0, 1.0]),
    ]
    add_speedups(rows)
    notes = slowdown_notes(rows, cores=2)
    assert len(notes) == 2  # the last row is faster than naive and than the row above
    assert notes[1] == (
        "row 2 (0.67x vs naive, 1.33x this step): faster than the row above, "
        "still paying for row 1 (0.50x)"
    )
