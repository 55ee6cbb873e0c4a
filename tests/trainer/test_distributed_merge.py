"""Per-rank diagnose observations written as files and merged on rank 0 (real files, no torch)."""

from __future__ import annotations

import threading
import time

from torchdoctor.diagnose.distributed_merge import (
    collect_rank_observations,
    merge_rank_observations,
    rank_file,
    write_rank_observation,
)
from torchdoctor.diagnose.observations import RunObservation, StepObservation
from torchdoctor.diagnose.rules import d604_straggler_rank as d604


def run_with_steps(step_s: float, batch: int, status: str = "stopped") -> RunObservation:
    steps = [
        StepObservation(
            index=i, wall_s=step_s * (1 + 0.01 * i), phases={"other": step_s}, batch_size=batch
        )
        for i in range(5)
    ]
    return RunObservation(target="train.py", status=status, steps=steps)


def test_rank_zero_gets_every_ranks_median_step_and_batch(tmp_path):
    write_rank_observation(run_with_steps(0.10, 32), tmp_path, 0)
    write_rank_observation(run_with_steps(0.25, 32), tmp_path, 1)  # the straggler
    merged = merge_rank_observations(
        run_with_steps(0.10, 32), collect_rank_observations(tmp_path, 2, timeout_s=1)
    )
    assert merged.distributed.world_size == 2
    assert [round(s, 4) for s in merged.distributed.per_rank_step_s] == [0.102, 0.255]
    assert merged.distributed.per_rank_batch == [32, 32]
    assert not list(tmp_path.glob(".*.tmp"))  # written atomically


def test_a_rank_that_never_reports_is_a_note_not_a_hang(tmp_path):
    write_rank_observation(run_with_steps(0.1, 8), tmp_path, 0)
    started = time.monotonic()
    ranks = collect_rank_observations(tmp_path, 3, timeout_s=0.3, poll_s=0.05)
    assert time.monotonic() - started < 5
    merged = merge_rank_observations(run_with_steps(0.1, 8), ranks)
    assert merged.distributed.per_rank_step_s == []  # indexed by rank: not filled with holes
    assert "rank 1 wrote no observations (it crashed or did not finish in time)" in merged.notes
    assert "merged the observations of 1 of 3 ranks" in merged.notes


def test_collect_waits_for_a_slow_rank_and_reports_its_crash(tmp_path):
    write_rank_observation(run_with_steps(0.1, 8), tmp_path, 0)
    crashed = run_with_steps(0.1, 8, status="crashed")
    crashed.error = "RuntimeError: CUDA out of memory"
    late = threading.Timer(0.2, write_rank_observation, args=(crashed, tmp_path, 1))
    late.start()
    ranks = collect_rank_observations(tmp_path, 2, timeout_s=10, poll_s=0.05)
    late.join()
    assert rank_file(tmp_path, 1).is_file() and ranks[1] is not None
    merged = merge_rank_observations(run_with_steps(0.1, 8), ranks)
    assert merged.status == "crashed" and merged.error == "rank 1: RuntimeError: CUDA out of memory"


def ranks_with_walls(tmp_path, *walls: list[float]) -> RunObservation:
    """Rank r's steps took walls[r] (no communication timed); merged on rank 0."""
    for rank, rank_walls in enumerate(walls):
        steps = [
            StepObservation(index=i, wall_s=w, phases={"other": w}, batch_size=32)
            for i, w in enumerate(rank_walls)
        ]
        write_rank_observation(RunObservation("train.py", steps=steps), tmp_path, rank)
    main = RunObservation("train.py")
    return merge_rank_observations(main, collect_rank_observations(tmp_path, len(walls), 1))


def test_d604_decides_a_straggler_step_by_step_not_on_a_margin_load_moves(tmp_path):
    # a busy machine: every step of both ranks slowed alike by 0-40 ms, rank 1 8 ms busier each
    load = [0.040 * ((7 * i) % 10) / 10 for i in range(12)]
    fast = [0.100 + extra for extra in load]
    straggler = ranks_with_walls(tmp_path / "a", fast, [w + 0.008 for w in fast])
    assert straggler.distributed.per_rank_slower_share == [0.0, 1.0]
    assert d604.check(straggler)[0].details["rank"] == 1  # 6% longer: under the old 10% margin
    # no straggler: the load stalled rank 1 in every other step (its median 45% longer), and
    # it was faster in the others: busier in half the steps
    noisy = ranks_with_walls(tmp_path / "b", [0.100] * 12, [0.090, 0.200] * 6)
    assert noisy.distributed.per_rank_slower_share == [0.5, 0.5]
    assert d604.check(noisy) == []
