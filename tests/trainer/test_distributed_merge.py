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
