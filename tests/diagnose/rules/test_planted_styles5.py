"""The fifth set of planted scripts (styles.py PLANTED5), diagnosed for real where the decision
rests on counts and autograd structure, not on timings: a GAN whose discriminator's backward
walks into a generator output that was not detached (its graph retained for the generator's
step). Short runs (6 measured steps, no what-if timing); the full default-mode table, ranks
included, is `bench/planted_styles.py --set styles5`.
"""

from __future__ import annotations

from planted import diagnose_planted, one_thread  # noqa: F401  (autouse fixture: one torch thread)
from styles import PLANTED5

GAN = "x29_cgan_trainer_methods_fake_not_detached"
CLEAN_GAN = "y03_clean_gan_fake_detached_no_retain"


def diagnose(script: str, *args: str):
    return diagnose_planted(PLANTED5, script, *args)


def line_of(script: str, text: str) -> int:
    path = next(p.path for p in PLANTED5 if p.script == script)
    lines = path.read_text().splitlines()
    return next(number for number, line in enumerate(lines, 1) if text in line)


def test_a_backward_into_a_retained_graph_after_a_forward_is_d214_at_the_retaining_line():
    # D's loss on G's output, not detached, backward(retain_graph=True); G's step then runs D
    # again (a model forward) and its backward walks back into the retained generator graph
    report = diagnose(GAN)
    habits = report.run.habits
    assert habits.retained_backwards_per_step == 1, habits
    assert habits.retained_reused_after_forward_per_step == 1, habits
    d214 = next(f for f in report.findings if f.id == "D214")
    line = line_of(GAN, "loss.backward(retain_graph=not FIXED)")
    assert f"{GAN}.py:{line}" in d214.evidence[0] and "not detached" in d214.evidence[0]
    assert ".detach()" in d214.fix
    control = diagnose(GAN, "--fixed")  # fake.detach() for D, no retain_graph
    assert control.run.habits.retained_backwards_per_step == 0
    assert "D214" not in [f.id for f in control.findings]


def test_a_retained_graph_nothing_walks_again_is_not_d214():
    # retain_graph=True out of habit on a detached fake: the generator's backward after the next
    # forward shares no node with the retained graph (only the parameters' leaves)
    report = diagnose(CLEAN_GAN, "--retain")
    assert report.run.habits.retained_backwards_per_step == 0, report.run.habits
    assert "D214" not in [f.id for f in report.findings]
