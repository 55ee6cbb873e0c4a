"""Measurement rules of --try on a real script with two planted traps (QA F24): batches
prefetched by loader workers during a slow warm-up, and random augmentation that moves into the
workers."""

from pathlib import Path

import pytest

from torchdoctor.trials.api import run_trials

# Timing-based diagnoses: run after the rest of the suite, one at a time (tests/conftest.py).
pytestmark = pytest.mark.timing

SCRIPT = Path(__file__).parent / "scripts" / "prefetch_warmup.py"


@pytest.fixture(scope="module")
def report():
    return run_trials(str(SCRIPT), [], "workers", steps=4, repeats=1, warmup=1)


def workers_of(report):
    (workers,) = report.variants
    assert workers.config.name == "workers" and workers.config.status == "ok", workers.config
    return workers


def test_batches_prefetched_during_a_slow_warm_up_are_not_timed(report):
    workers = workers_of(report)
    assert report.baseline.prefetch_steps == 0
    queue = workers.config.prefetch_steps  # num_workers x prefetch_factor (2)
    assert queue >= 2 and queue % 2 == 0, workers.config
    # Each batch sleeps 80 ms in one worker, so with queue/2 workers a steady step can not take
    # less than 80 ms / workers; the prefetched steps took ~0 ms and would have looked 50x faster.
    # The floor holds for the mean step; a median step can be under it when the training process
    # is preempted (CI under load: 35 ms against a 40 ms floor), while the workers fill the queue
    # and the next steps find their batches ready. Prefetched steps timed would be ~1 ms: half
    # the floor still tells them apart.
    floor = 0.080 / (queue // 2)
    assert workers.config.step_s.median >= 0.5 * floor, workers.config.step_s
    assert workers.speedup.median < 1.5 * (queue // 2), workers.speedup
    assert workers.verdict != "faster"  # one repeat is never enough to call it


def test_random_augmentation_moved_into_workers_is_kept_not_changed(report):
    semantics = workers_of(report).semantics
    # the baseline ran twice with the same seed and reproduced itself exactly ...
    assert report.baseline.runs == 2 and semantics.baseline_noise == 0.0
    # ... while the workers drew other noise: a real difference beyond the 1e-6 tolerance
    assert semantics.max_deviation > semantics.tolerance
    assert semantics.verdict == "random draws differ"
    assert workers_of(report).verdict != "changes results"
