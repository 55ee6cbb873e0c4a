"""The ninth set of planted scripts (styles.py PLANTED9), where the decision rests on counts and
structure, not timings: gradients cleared once per epoch in an accumulation loop, a user's
after-backward hook that clears the gradients before the trainer's step, and a "freeze BatchNorm"
helper that puts the whole model (Dropout included) in eval mode for training. Short runs (6 measured steps, no what-if timing); the
full default-mode table, ranks included, is `bench/planted_styles.py --set styles9`.
"""

from __future__ import annotations

import pytest
from planted import (
    assert_top_error_and_quiet_control,
    one_thread,  # noqa: F401  (autouse fixture: one torch thread)
)
from styles import PLANTED9


@pytest.mark.parametrize(
    "script",
    [
        "f13_accumulation_zero_grad_once_per_epoch",
        "f31_after_backward_hook_clears_gradients",
        "f25_freeze_bn_helper_puts_whole_model_in_eval",
    ],
)
def test_correctness_problems_in_the_ninth_set_are_errors(script):
    assert_top_error_and_quiet_control(PLANTED9, script)
