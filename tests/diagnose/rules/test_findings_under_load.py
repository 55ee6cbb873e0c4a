"""The same finding on a busy machine as on an idle one: rules that read a phase's share of the
step read it where a preemption does not move it (bench/finding_stability.py measures the
flips on real runs)."""

from __future__ import annotations

from rule_builders import good_cpu_run, only

from torchdoctor.diagnose.observations import StepObservation
from torchdoctor.diagnose.rules import d210_optimizer_not_fused as d210

PHASES = {"forward": 0.002, "backward": 0.003, "optimizer": 0.001}  # the optimizer: 1/6


def preempted_steps(n: int, preemption_s: float) -> list[StepObservation]:
    """`n` steps of PHASES, each with one preemption of `preemption_s` landing in a phase in
    proportion to its time, as a busy machine's scheduler spreads them (step 0, 6: optimizer;
    1-2, 7-8: forward; the others: backward)."""
    landing = ["optimizer", "forward", "forward", "backward", "backward", "backward"]
    steps = []
    for i in range(n):
        phases = {"data": 0.0, "h2d": 0.0, **PHASES, "other": 0.0}
        phases[landing[i % len(landing)]] += preemption_s
        steps.append(StepObservation(index=i, wall_s=sum(phases.values()), phases=phases))
    return steps


def test_d210s_estimate_reads_the_optimizers_share_as_the_busy_steps_profile_does():
    """The optimizer's 17% of a 6 ms step, each step preempted once for 40 ms: its median phase
    (1 ms) against the median step (46 ms) read 2%, under the 10% line, and the finding went."""
    idle = only(d210.check(good_cpu_run(steps=preempted_steps(12, 0.0))), "D210")
    busy = only(d210.check(good_cpu_run(steps=preempted_steps(12, 0.040))), "D210")
    assert idle.saving_basis == busy.saving_basis == "estimated"
    assert abs(busy.saving - idle.saving) < 0.02, (idle.saving, busy.saving)
