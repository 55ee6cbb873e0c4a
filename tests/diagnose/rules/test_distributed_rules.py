"""D603, D604 (straggler rank) and D605 (unequal batches per rank) on hand-built observations."""

from __future__ import annotations

import pytest
from rule_builders import evidence_text, good_cpu_run, good_h100_run, only

from torchdoctor.diagnose.observations import DistributedObservation
from torchdoctor.diagnose.rules import (
    d603_accumulation_syncs_gradients as d603,
)
from torchdoctor.diagnose.rules import (
    d604_straggler_rank as d604,
)
from torchdoctor.diagnose.rules import (
    d605_unequal_rank_batches as d605,
)


def ranks_run(step_s, comm_s=(), batches=(64, 64), comm_here=None):
    """A 2+-rank run as rank 0 sees it after merging every rank's observation."""
    world = len(step_s)
    return good_h100_run(
        distributed=DistributedObservation(
            world_size=world,
            backend="nccl",
            per_rank_step_s=list(step_s),
            per_rank_comm_s=list(comm_s),
            per_rank_batch=list(batches) or [64] * world,
            comm_s_per_step=comm_here,
        )
    )


def test_d604_finds_the_straggler_hidden_behind_equal_step_times():
    # every rank's step lasts ~40 ms: rank 2 works 36 ms, the others 10 ms and wait 30 ms
    run = ranks_run(
        [0.040, 0.041, 0.040, 0.040], comm_s=[0.030, 0.031, 0.004, 0.030], batches=[64] * 4
    )
    finding = only(d604.check(run), "D604")
    assert finding.details["rank"] == 2
    assert finding.saving == pytest.approx((0.036 - 0.010) / 0.041)
    assert finding.severity == "warning"
    assert "Rank 2 was busy 36.0 ms" in evidence_text(finding)
    assert "DistributedSampler" in finding.fix


def test_d604_silent_for_balanced_ranks_noise_and_single_process():
    balanced = ranks_run([0.040, 0.040], comm_s=[0.004, 0.0036])  # 36.0 vs 36.4 ms: noise
    assert d604.check(balanced) == []
    tiny = ranks_run([0.0012, 0.0020], comm_s=[0.0010, 0.0010])  # 0.2 vs 1.0 ms: < 1 ms apart
    assert d604.check(tiny) == []
    assert d604.check(ranks_run([0.04])) == []
    assert d604.check(good_cpu_run()) == []


def test_d604_without_communication_times_compares_step_times():
    run = ranks_run([0.020, 0.030])
    finding = only(d604.check(run), "D604")
    assert finding.details["rank"] == 1
    assert finding.saving == pytest.approx(0.010 / 0.030)
    assert "not timed" in evidence_text(finding)


def test_d605_flags_unequal_batches_and_estimates_the_pace_cost():
    run = ranks_run([0.040, 0.040], batches=[32, 64], comm_here=0.010)
    finding = only(d605.check(run), "D605")
    # 30 of 40 ms is work; the 64-sample rank shrinks to the mean of 48
    assert finding.saving == pytest.approx(0.75 * (1 - 48 / 64))
    assert finding.changes_semantics is True
    assert "rank 0: 32, rank 1: 64" in evidence_text(finding)
    assert d605.check(ranks_run([0.040, 0.040], batches=[64, 64])) == []
    assert d605.check(good_cpu_run()) == []


def test_d603_fires_from_the_probe_counts():
    run = ranks_run([0.040, 0.040], comm_here=0.020)
    for step in run.steps:
        step.micro_batches = 2
    assert d603.check(run) == []  # micro-steps ran under no_sync(): nothing counted
    run.distributed.micro_steps_syncing = 8
    finding = only(d603.check(run), "D603")
    assert finding.saving == pytest.approx(min(1.0, 0.020 / run.steps[0].wall_s) * 0.5)
