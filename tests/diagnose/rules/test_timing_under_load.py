"""Timing-based rules beside busy-loop processes pinned to the training thread's core (the CI
box, a laptop with a browser open): a clean program gets no warning from them, and a planted
problem they find is still found. Real scripts, real contention."""

from __future__ import annotations

import pytest
from planted import (
    busy_core,
    diagnose,
    one_thread,  # noqa: F401  (autouse fixture: one torch thread)
)
from styles import PLANTED3

from torchdoctor.diagnose.api import diagnose_script

# Timing-based diagnoses: run after the rest of the suite, one at a time (tests/conftest.py).
pytestmark = pytest.mark.timing


def serious(report) -> list[tuple[str, str]]:
    return [(f.id, f.severity) for f in report.findings if f.severity != "info"]


def test_a_clean_distillation_control_beside_a_busy_loop_gets_no_warning():
    # styles3 u26's control: a frozen teacher's no_grad forward in every step (evaluation) and
    # 6 short steps; CI's second test worker gave it D304 and D504 warnings
    path = str(next(p.path for p in PLANTED3 if p.script.startswith("u26_")))
    with busy_core(1):
        report = diagnose_script(path, ["--fixed"], steps=6, warmup=3, whatif=False)
    assert report.run.status == "stopped", report.run.error
    assert serious(report) == [], [(f.id, f.evidence) for f in report.findings]


@pytest.mark.parametrize(("script", "code"), [("d504_growing_history", "D504"),
                                              ("d304_eval_every_step", "D304")])  # fmt: skip
def test_a_planted_timing_problem_is_still_found_beside_a_busy_loop(script, code):
    with busy_core(1):
        report = diagnose(script, steps=8)
    assert code in [f.id for f in report.findings], serious(report)


def test_d110_is_quiet_where_the_workers_cpu_time_per_batch_keeps_pace_with_the_step():
    # two workers handing over pre-built batches (y09: ~0.3 ms of worker CPU per batch against
    # ~4 ms of step) waited 60% of the step beside other processes: the load, not the items
    from styles import PLANTED5

    clean = str(next(p.path for p in PLANTED5 if p.script.startswith("y09_")))
    with busy_core(1):
        quiet = diagnose_script(clean, [], steps=8, warmup=3, whatif=False)
    (loader,) = [ld for ld in quiet.run.loaders if ld.num_workers]
    assert loader.worker_cpu_s and loader.worker_cpu_s > 0, loader
    assert "D110" not in [f.id for f in quiet.findings], serious(quiet)
    # (the planted script is D110's top finding in test_planted_scripts)
