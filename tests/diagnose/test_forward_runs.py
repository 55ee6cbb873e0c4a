"""A run of identical root forwards (same module, call site, grad/train mode, input shape, no
backward, update or data wait between) is one forward record that counts them (probes/forward.py):
every reader counts the forwards, not the records, and a run never spans a backward."""

from __future__ import annotations

import torch
from torch import nn

import torchdoctor

ACTING = 12  # acting forwards per step
STEPS = 10


def _acting_then_update(steps: int, policy, optimizer) -> None:
    """ACTING no-grad acting forwards of one observation each, then one update on a batch."""
    for _ in range(steps):
        observations = []
        for _ in range(ACTING):
            observation = torch.randn(1, 4)
            with torch.no_grad():
                policy(observation)
            observations.append(observation)
        loss = policy(torch.cat(observations)).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def test_a_run_of_identical_acting_forwards_is_one_record_counting_them():
    torch.manual_seed(0)
    policy = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    optimizer = torch.optim.SGD(policy.parameters(), lr=0.01)
    watch = torchdoctor.watch(warmup=2, steps=STEPS, whatif=False)
    with watch:
        _acting_then_update(STEPS + 4, policy, optimizer)
    records = watch.session.tracker.eval_forwards
    evaluation = watch.report.run.evaluation
    assert evaluation.forwards == sum(f.count for f in records) >= ACTING * STEPS
    assert evaluation.under_no_grad == evaluation.forwards
    assert len(records) * ACTING == evaluation.forwards  # one record a step's run
    assert evaluation.forward_seconds < evaluation.seconds  # the forwards' time, not the span's
    assert all(s.training_forwards == 1 for s in watch.report.run.steps)


def test_micro_batches_at_one_call_site_stay_separate_forwards():
    """Gradient accumulation calls the model at one line with a backward between: a record
    each, so the step's samples add up over its micro-batches."""
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    watch = torchdoctor.watch(warmup=2, steps=6, whatif=False)
    with watch:
        for _ in range(10):
            for _ in range(4):
                model(torch.randn(8, 4)).sum().backward()
            optimizer.step()
            optimizer.zero_grad()
    steps = watch.report.run.steps
    assert steps and all(s.batch_size == 32 and s.micro_batches == 4 for s in steps)
    assert all(s.training_forwards == 4 for s in steps)
