"""The tenth set of planted scripts (styles.py PLANTED10), where the decision rests on counts and
structure, not timings, and a whole-cycle stop that lands between a training forward and its
backward. Short runs (6 measured steps, no what-if timing); the full default-mode table, ranks
included, is `bench/planted_styles.py --set styles10`.
"""

from __future__ import annotations

import pytest
from planted import (
    SCRIPTS,
    assert_top_error_and_quiet_control,
    diagnose,
    found,
    one_thread,  # noqa: F401  (autouse fixture: one torch thread)
)
from styles import PLANTED10

from torchdoctor.diagnose.api import diagnose_script


@pytest.mark.parametrize(
    "script",
    [
        "h21_zero_grad_indented_into_logging_block",
        "h22_optimizer_context_manager_clears_before_step",
    ],
)
def test_correctness_problems_in_the_tenth_set_are_errors(script):
    assert_top_error_and_quiet_control(PLANTED10, script)


def test_a_forward_whose_backward_the_stop_cut_off_is_no_evaluation():
    """The --budget runs out at the teacher's no-grad forward, after the student's forward and
    before its backward: that student forward (autograd on, train mode, Dropout) is training cut
    short by our stop, not an evaluation with autograd in train mode (a false D302 error and
    D301 before)."""
    report = diagnose_script(
        str(SCRIPTS / "stop_between_forward_and_backward.py"),
        steps=None,
        budget_s=2.0,
        whatif=False,
    )
    assert report.run.status == "stopped", (report.run.status, report.run.error)
    assert report.run.evaluation.forwards == 0, found(report)
    assert not {"D301", "D302"} & {code for code, _ in found(report)}, found(report)


def test_warnings_shown_every_step_are_logging():
    """`warnings.warn` every step with a filter that shows it every time is a log line written to
    stderr (h29's clipping report): its writes and the tensors formatted into its message count
    for D702 as print() and logging records do."""
    report = diagnose("d702_warning_every_step", steps=10)
    assert report.run.io.log_records_per_step == 1, report.run.io
    assert "D702" in [code for code, _ in found(report)], found(report)


def test_a_teachers_autograd_on_forward_in_every_step_is_not_validation():
    """A teacher never frozen (weights requiring grad) runs with autograd on in every step, its
    output detached for the loss (h30's memoised teacher): D301 names the wasted autograd, but
    its forwards are the step's work, not validation run too often (a false D304 before)."""
    report = diagnose("d301_teacher_with_autograd", steps=8)
    evaluation = report.run.evaluation
    assert evaluation.beside_training_with_grad == evaluation.forwards > 0, evaluation
    codes = [code for code, _ in found(report)]
    assert "D304" not in codes and "D301" in codes, found(report)
