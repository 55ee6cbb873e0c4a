"""The eighth set of planted scripts (styles.py PLANTED8), where the decision rests on counts and
structure, not timings: an optimizer that steps with no gradient (zero_grad between backward and
step, in an accumulation window written for DDP's `no_sync()` and in a GAN's generator update),
and gradients never cleared because the program clears a second optimizer's parameters only.
Short runs (6 measured steps, no what-if timing); the full default-mode table, ranks included,
is `bench/planted_styles.py --set styles8`.
"""

from __future__ import annotations

import pytest
from planted import (
    assert_top_error_and_quiet_control,
    one_thread,  # noqa: F401  (autouse fixture: one torch thread)
)
from styles import PLANTED8


@pytest.mark.parametrize(
    "script",
    [
        "e03_no_sync_accumulation_zero_grad_before_step",
        "e14_gan_gradient_penalty_generator_zero_grad_after_backward",
        "e33_prototypical_episodes_optimizer_zero_grad_wrong_object",
    ],
)
def test_correctness_problems_in_the_eighth_set_are_errors(script):
    assert_top_error_and_quiet_control(PLANTED8, script)
