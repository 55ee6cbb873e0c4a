"""The replay the what-ifs time is on the steps' typical batch, not on whatever batch the last
training call happened to have (an epoch's short last batch)."""

from __future__ import annotations

from types import SimpleNamespace

import torch
from rule_builders import good_cpu_run

from torchdoctor.diagnose.whatif import _Plan
from torchdoctor.diagnose.whatif.batch import replay_batch
from torchdoctor.diagnose.whatif.replay import Replay, at_typical_batch


class ForwardProbe:
    """Stands in for the forward probe: the last training call of each model."""

    def __init__(self, model, *args):
        self.training_calls = {id(model): (model, args, {})}


def test_the_replay_of_an_epochs_short_last_batch_is_timed_at_the_steps_batch():
    """DKT (round 11): the diagnosis stopped after an epoch's last batch of 28 rows where the
    steps had 256; D204's bf16 ratio on 28 rows was applied to the 256-row steps' forward and
    backward (~32% stated from a 29.7 ms replay against a 3.1 s step)."""
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    run = good_cpu_run()
    for step in run.steps:
        step.training_forward_rows = 64
    plan = _Plan(SimpleNamespace(probes=[ForwardProbe(model, torch.randn(16, 8))]), run)
    replay = plan.replay()
    assert replay is not None and replay_batch(replay) == 64
    assert replay.model is not model  # still a copy


def test_a_replay_near_the_typical_batch_or_one_the_model_refuses_resized_is_kept():
    model = torch.nn.Linear(8, 1)
    near = Replay(model, (torch.randn(60, 8),), {}, "cpu")
    assert at_typical_batch(near, 64) is near  # within 25%: as the program ran it

    class FixedBatch(torch.nn.Module):
        def forward(self, x):
            assert x.shape[0] == 16, "this model only takes 16 rows"
            return x.sum()

    refused = Replay(FixedBatch(), (torch.randn(16, 8),), {}, "cpu")
    assert at_typical_batch(refused, 64) is refused
    assert at_typical_batch(refused, None) is refused
