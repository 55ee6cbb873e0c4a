"""The third set of planted scripts (styles.py PLANTED3), diagnosed for real: the planted findings
are decided by counts and structure (kept tensors, gradient and mode checks, which rule owns a
line), but a control's "no warning at all" also rests on the timing-based rules (D304, D504),
so the module runs with the timing tests. Short runs (6 measured steps, no what-if timing); the
full default-mode table, ranks included, is `bench/planted_styles.py --set styles3`.
"""

from __future__ import annotations

import pytest
from planted import (
    assert_top_error_and_quiet_control,
    diagnose_planted,
    found,
    one_thread,  # noqa: F401  (autouse fixture: one torch thread)
)
from styles import PLANTED3

# Timing-based diagnoses: run after the rest of the suite, one at a time (tests/conftest.py).
pytestmark = pytest.mark.timing


def diagnose(script: str, *args: str):
    return diagnose_planted(PLANTED3, script, *args)


def test_loss_terms_kept_with_their_graphs_are_found_and_not_when_detached():
    # a multi-task dict of losses appended to a history: the tensor passed to backward() (their
    # sum) is not kept, its terms are
    report = diagnose("u08_multitask_loss_dict_history")
    d503 = next(f for f in report.findings if f.id == "D503")
    assert "loss term" in d503.evidence[0] and "with its autograd graph" in d503.evidence[0]
    assert [r.kind for r in report.run.memory.retained] == ["term"]
    control = diagnose("u08_multitask_loss_dict_history", "--fixed")
    assert control.run.memory.retained == [], control.run.memory.retained
    assert "D503" not in [f.id for f in control.findings], found(control)


@pytest.mark.parametrize(
    "script",
    ["u14_weight_tying_grads_never_cleared", "u26_student_copied_from_eval_teacher"],
)
def test_correctness_problem_is_the_top_error_and_its_control_is_quiet(script):
    assert_top_error_and_quiet_control(PLANTED3, script)


def test_the_models_zero_grad_filling_zeros_is_timed_as_its_optimizers():
    # model.zero_grad(set_to_none=False): the module's, not the optimizer's, fills the gradients
    report = diagnose("u22_module_zero_grad_keep_buffers")
    (optimizer,) = report.run.optimizers
    assert optimizer.set_to_none is False and optimizer.filled_by_module, optimizer
    assert optimizer.zero_fill_s and optimizer.zero_fill_s > 0
    control = diagnose("u22_module_zero_grad_keep_buffers", "--fixed")
    (optimizer,) = control.run.optimizers
    assert optimizer.set_to_none is None and not optimizer.zero_fill_s, optimizer
    assert "D220" not in [f.id for f in control.findings], found(control)
