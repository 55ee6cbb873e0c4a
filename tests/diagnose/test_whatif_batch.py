"""The batch what-if (D202) on models whose time per call is known by construction."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from torchdoctor.diagnose.whatif.batch import measure_batch
from torchdoctor.diagnose.whatif.replay import Replay

pytestmark = pytest.mark.timing  # timed, with margins of 2x and more


class WorkPerCall(nn.Module):
    """A fixed amount of matmul work per call, however many samples (`shrinking`: less work the
    larger the batch, which no real model does: what a noisy timing looks like)."""

    def __init__(self, shrinking: bool):
        super().__init__()
        self.linear = nn.Linear(64, 64)
        self.shrinking = shrinking

    def forward(self, x):
        rounds = 64 // x.shape[0] if self.shrinking else 8
        w = torch.randn(256, 256)
        for _ in range(rounds):
            w = w @ w.T / 256
        return self.linear(x) + w.sum() * 0


def timings(shrinking: bool):
    torch.manual_seed(0)
    replay = Replay(WorkPerCall(shrinking), (torch.randn(4, 64),), {}, "cpu")
    return {t.batch_factor: t for t in measure_batch(replay, 4, allowance_s=0.5)}


def test_a_larger_batch_that_costs_the_same_per_call_is_timed_per_sample():
    found = timings(shrinking=False)
    assert set(found) == {2, 4}
    assert found[4].alternative_s < found[2].alternative_s < found[4].as_run_s


def test_a_larger_batch_timed_faster_than_the_batch_as_run_is_not_a_measurement():
    # 2x and 4x the samples in 1/2 and 1/4 of the time: a per-sample ratio of 1/4 and 1/16
    # would be claimed as a saving of 75-94%; no timing is kept
    assert timings(shrinking=True) == {}
