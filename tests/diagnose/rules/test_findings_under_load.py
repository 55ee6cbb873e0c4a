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


def test_a_short_runs_budget_is_raised_for_the_larger_batch_where_d202_needs_its_measurement(
    monkeypatch,
):
    """A batch of 2 through 1024-wide layers: its ops are not trivial, so D202 fires only on the
    larger batch's measured gain. On a short, busy run (0.2-0.3 s of budget) the probe did not
    fit and D202 came and went. Its floor (warm-up and fewest rounds at 1x, 2x and 4x the
    batch) is what a short run's budget is raised to, as the workers' and evaluation's are;
    not where the ops are trivial (D202 has its estimate then)."""
    from types import SimpleNamespace

    from torchdoctor.diagnose.rules import d202_batch_too_small as d202
    from torchdoctor.diagnose.rules._overhead import OpOverhead
    from torchdoctor.diagnose.whatif import _Plan, _raised
    from torchdoctor.diagnose.whatif.guard import Budget

    def plan_with(mean_op_s: float) -> _Plan:
        ops = OpOverhead(ops_per_step=94, mean_op_s=mean_op_s, dispatch_s=2.6e-6)
        bound = d202.OverheadBound(ops, step_s=0.006, utilization=0.002, micro_batch=2.0)
        monkeypatch.setattr(d202, "batch_candidate", lambda run: bound)
        plan = _Plan(SimpleNamespace(probes=[]), good_cpu_run(steps=preempted_steps(8, 0.0)))
        plan.build()
        return plan

    plan = plan_with(mean_op_s=45e-6)  # 17x the trivial op: a measurement decides
    floor = plan.raise_only["larger batch"]
    assert floor >= 4 * (1 + 2 + 4) * 0.005  # warm-up + 3 rounds of a 5 ms forward and backward
    assert _raised(plan, Budget(0.01), most_s=10.0) >= floor
    # not a floor of its allowance: the probes after it (the optimizer's) keep their share
    assert "larger batch" not in plan.floors
    assert "larger batch" not in plan_with(mean_op_s=3e-6).raise_only  # trivial: D202 estimates


def test_the_trivial_op_floor_is_cpu_time_on_a_cpu_whatever_the_wall_clock_does(monkeypatch):
    """At load 28 every block of the floor's trivial ops was preempted: 44.7 us a trivial op, in
    wall time, against ops whose CPU time was 2.3 us; every op then read as trivial and a clean
    loop got D202. Here the wall clock jumps 100 ms at every reading, as a preempted block would."""
    import time

    from torchdoctor.diagnose.probes import peak_flops

    real = time.perf_counter
    jumps = iter(range(10**6))
    monkeypatch.setattr(time, "perf_counter", lambda: real() + 0.1 * next(jumps))
    assert peak_flops.dispatch_overhead("cpu") < 1e-4  # a trivial op: microseconds, not 3
