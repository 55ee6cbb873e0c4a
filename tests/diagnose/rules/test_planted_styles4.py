"""The fourth set of planted scripts (styles.py PLANTED4), diagnosed for real: correctness
problems found as errors, decided by counts (gradients carried over, steps without gradients,
modules' modes), and a loader built for every batch over a growing replay buffer. A control's
"no warning at all" also rests on timing-based rules, so the module runs with the timing tests.
Short runs (6 measured steps, no what-if timing); the full default-mode table, ranks included,
is `bench/planted_styles.py --set styles4`.
"""

from __future__ import annotations

import pytest
from planted import (
    assert_top_error_and_quiet_control,
    diagnose_planted,
    found,
    one_thread,  # noqa: F401  (autouse fixture: one torch thread)
)
from styles import PLANTED4

# Timing-based diagnoses: run after the rest of the suite, one at a time (tests/conftest.py).
pytestmark = pytest.mark.timing


def diagnose(script: str, *args: str):
    return diagnose_planted(PLANTED4, script, *args)


@pytest.mark.parametrize(
    "script",
    [
        # two optimizers, the critic's never cleared (the generator's cleared twice)
        "v08_gan_n_critic_critic_grads_never_cleared",
        # a helper that clears the gradients and then steps, behind gradient accumulation
        "v16_grad_accum_zero_grad_before_step",
    ],
)
def test_correctness_problem_is_the_top_error_and_its_control_is_quiet(script):
    assert_top_error_and_quiet_control(PLANTED4, script)


def test_a_loader_built_for_every_batch_of_a_growing_buffer_is_one_loader_rebuilt():
    # DQN: `next(iter(DataLoader(buffer, num_workers=1)))` per update while the buffer grows.
    # The loaders differ in length only: one site, one dataset, built again for every batch.
    # The batch feeds the target network under no_grad first, then the online network: the
    # wait is training data time, not evaluation cut out of the step.
    report = diagnose("v28_dqn_replay_loader_next_iter")
    (loader,) = report.run.loaders
    assert loader.loaders_built == loader.epochs_started == loader.batches > 3, loader
    d107 = next(f for f in report.findings if f.id == "D107")
    assert d107.saving > 0.05, (d107.saving, found(report))  # ~0.3; ~0.0004 with the wait cut
    control = diagnose("v28_dqn_replay_loader_next_iter", "--fixed")
    assert control.run.loaders == [] and "D107" not in [f[0] for f in found(control)]
