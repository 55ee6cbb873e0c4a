"""The eleventh set of planted scripts (styles.py PLANTED11), where the decision rests on counts
and structure, not timings. Short runs (6 measured steps, no what-if timing); the full
default-mode table, ranks included, is `bench/planted_styles.py --set styles11`.
"""

from __future__ import annotations

import pytest
from planted import (
    assert_top_error_and_quiet_control,
    diagnose,
    found,
    one_thread,  # noqa: F401  (autouse fixture: one torch thread)
)
from styles import PLANTED11


@pytest.mark.parametrize(
    "script",
    [
        "k06_callback_registry_zero_grad_on_misspelled_event",
        "k07_sam_second_step_after_zero_grad",
    ],
)
def test_correctness_problems_in_the_eleventh_set_are_errors(script):
    assert_top_error_and_quiet_control(PLANTED11, script)


def test_evaluation_in_train_mode_through_a_no_grad_decorator_is_d302():
    """`@torch.no_grad() def evaluate(...)` that never calls eval() (k04's pseudo-labelling):
    the decorator's wrapper is the code every no_grad-decorated function shares, update_bn's
    included, so its train-mode forwards passed for update_bn's statistics refresh (no D302)."""
    report = diagnose("d302_no_grad_decorated_eval", steps=12)
    assert report.run.evaluation.in_train_mode == report.run.evaluation.forwards > 0, found(report)
    assert ("D302", "error") in found(report), found(report)


@pytest.mark.timing
def test_a_metrics_dict_pretty_printed_every_step_is_logging():
    """`pprint.pprint(metrics)` every step (k21): pprint writes to the stream itself, so no
    print() was counted and D702 could not fire at any cost."""
    report = diagnose("d702_pprint_every_step", steps=10)
    assert report.run.io.prints_per_step == 1, report.run.io
    assert "D702" in [code for code, _ in found(report)], found(report)
