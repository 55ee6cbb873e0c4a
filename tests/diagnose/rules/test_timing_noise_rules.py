"""Timing-based rules on step timings a busy machine produces (recorded observations): one step
another process interrupted, a load that rose once mid-run, or CPU times read on a few steps
only must not make a finding, and a real growth or a real evaluation share still does."""

from __future__ import annotations

import re

import pytest
from rule_builders import evidence_text, good_cpu_run, line_profiled_run, only

from torchdoctor.diagnose.observations import (
    EvaluationObservation,
    IOObservation,
    LineStat,
    WhatIfTiming,
)
from torchdoctor.diagnose.probes.io import typical_per_step
from torchdoctor.diagnose.report.model import saving_words
from torchdoctor.diagnose.rules import d212_profiler_left_on as d212
from torchdoctor.diagnose.rules import d304_evaluation_too_frequent as d304
from torchdoctor.diagnose.rules import d504_step_time_growth as d504
from torchdoctor.diagnose.rules import d701_checkpoint_in_step as d701
from torchdoctor.diagnose.rules import d702_logging_in_step as d702
from torchdoctor.diagnose.rules import d801_hot_user_line as d801
from torchdoctor.diagnose.rules._growth import kendall_z, theil_sen
from torchdoctor.diagnose.steps import StepRecord


def cpu_timed(times: list[float], read: list[int] | None = None, wall=None):
    """A CPU run whose steps took `times` of CPU time; only the steps in `read` had their CPU
    time read (the others' wall time is `wall(i)`)."""
    from rule_builders import make_steps

    run = good_cpu_run(steps=make_steps(n=len(times), forward=0.01))
    for i, step in enumerate(run.steps):
        step.wall_s = wall(i) if wall else times[i]
        step.cpu_share = times[i] / step.wall_s if read is None or i in read else None
    return run


def test_robust_line_and_trend_statistic():
    xs = [float(i) for i in range(8)]
    line = [1.0 + 0.5 * x for x in xs]
    assert theil_sen(xs, line) == (0.5, 1.0)
    spiked = [*line[:-1], 100.0]  # one slow step moves the robust line not at all
    assert theil_sen(xs, spiked) == (0.5, 1.0)
    assert kendall_z(xs, line) > 3 and abs(kendall_z(xs, [1, 3, 2, 4, 1, 3, 2, 4])) < 1


def test_d504_not_from_a_load_that_rose_once_or_one_slow_step():
    # the other hardware thread of the core got busy from step 4 on: 1.6x from then, flat before
    jump = cpu_timed([0.010, 0.0101, 0.0099, 0.010, 0.016, 0.0161, 0.0159, 0.016])
    assert d504.check(jump) == []
    slow_end = cpu_timed([0.010] * 6 + [0.030, 0.031])  # the last two steps preempted
    assert d504.check(slow_end) == []


def test_d504_reads_the_cpu_time_of_the_steps_that_have_it_not_the_noisy_wall_time():
    # CPU time read on the first 6 steps and one in 8 after; wall times swing with the load
    grows = [0.010 + 0.002 * i for i in range(24)]
    noisy_wall = [(0.03, 0.09, 0.05, 0.2)[i % 4] + grows[i] for i in range(24)]
    run = cpu_timed(grows, read=[0, 1, 2, 3, 4, 5, 8, 16], wall=lambda i: noisy_wall[i])
    finding = only(d504.check(run), "D504")
    assert "rose by 2.0 ms per step" in evidence_text(finding)
    assert "8 of them timed in CPU time" in evidence_text(finding)
    flat = cpu_timed([0.010] * 24, read=[0, 1, 2, 3, 4, 5, 8, 16], wall=lambda i: noisy_wall[i])
    assert d504.check(flat) == []  # the wall times rise and fall with the load, the CPU not


def test_d504_a_growth_is_not_a_jump_because_the_first_steps_are_timed_back_to_back():
    # a history concatenated every step (styles8 e32, recorded at load 16): CPU time read on the
    # first 6 steps, then one in 8; +0.3 ms of noise between two neighbouring early steps is a
    # local slope 6x the growth's, and still only a small part of the 10 ms growth over the run
    read = [0, 1, 2, 3, 4, 5, *range(13, 200, 8)]
    noise = [0.3, 0.0, 0.3, -0.5, 0.1, -0.2]
    times = [(5.4 + 0.05 * i + (noise[i] if i < 6 else 0.0)) / 1000 for i in range(200)]
    finding = only(d504.check(cpu_timed(times, read=read, wall=lambda i: 0.02)), "D504")
    assert "timed in CPU time" in evidence_text(finding)


def with_evaluation(seconds: list[float]):
    run = good_cpu_run(
        evaluation=EvaluationObservation(forwards=len(seconds), locations=["train.py:60"])
    )
    run.evaluation.under_no_grad = len(seconds)
    for step, evaluation_s in zip(run.steps, seconds):
        step.evaluation_s = evaluation_s
    return run


def test_d304_not_from_one_evaluation_another_process_interrupted():
    step_s = good_cpu_run().steps[0].wall_s  # 13.7 ms
    small = [0.1 * step_s] * 8  # a small validation after every step: ~9% of the run
    assert d304.check(with_evaluation(small)) == []
    interrupted = [*small[:7], 5 * step_s]  # one evaluation waited 70 ms for the CPU
    assert d304.check(with_evaluation(interrupted)) == []
    long = [0.5 * step_s] * 8  # a third of the run, every step: as before
    finding = only(d304.check(with_evaluation(long)), "D304")
    assert finding.details["share"] > 0.3


def profiled(ratio: float, pairs: tuple[float, float] | None, op_overhead_s=None):
    """A run under the program's torch.profiler whose profiler.off what-if measured `ratio`
    (the pairs' median) with the pairs' lowest and highest ratio `pairs`."""
    run = good_cpu_run()
    run.habits.profiler_active_share = 1.0
    run.habits.profiler_op_overhead_s = op_overhead_s
    run.whatif.timings.append(
        WhatIfTiming(
            name="profiler.off",
            unit="forward, backward and optimizer step",
            as_run_s=0.010,
            alternative_s=0.010 * ratio,
            repeats=24,
            setting="no torch.profiler.profile",
            clock="cpu",
            pair_ratios=pairs,
        )
    )
    return run


def test_d212_states_no_cost_of_zero_from_pairs_that_disagreed():
    # round 6's CI: beside a second test worker the pairs' median came out 1.0, a warning with a
    # saving of 0.0 "measured"; pairs on both sides of 1 decide nothing
    undecided = only(d212.check(profiled(1.0, (0.6, 1.1))), "D212")
    assert undecided.saving_basis == "not measured" and undecided.saving == 0.0
    assert "pairs disagreed (0.60x-1.10x" in undecided.saving_how
    assert "undecided" in undecided.saving_how
    # no number stands: said so, not "saves 0%" nor "no time saving claimed"
    assert saving_words(undecided) == "time saving not measured on this run"
    # the benchmark's per-op cost still gives an estimate; the copy's disagreement is said
    estimated = only(d212.check(profiled(1.0, (0.6, 1.1), op_overhead_s=2e-5)), "D212")
    assert estimated.saving_basis == "estimated" and estimated.saving > 0.05
    assert estimated.severity == "warning" and "undecided" in estimated.saving_how
    # every pair found it costly: measured, a warning with its cost
    costly = only(d212.check(profiled(0.6, (0.55, 0.7))), "D212")
    assert costly.saving_basis == "measured" and costly.saving > 0.3
    assert costly.severity == "warning"
    # every pair found it free: measured at no cost, so not a warning
    free = only(d212.check(profiled(1.02, (1.0, 1.05))), "D212")
    assert free.saving_basis == "measured" and free.saving == 0.0 and free.severity == "info"


def writing(counter: str, seconds: list[float]):
    """A run that wrote (`counter`: "save_s" or "print_s") in some steps, `seconds` per step as
    the step tracker recorded them, the steps' wall time including the writes; its IO
    observation as the probe builds it."""
    run = good_cpu_run()
    from rule_builders import make_steps

    run.steps = make_steps(
        n=len(seconds), data=0.0005, forward=0.004, backward=0.008, optimizer=0.001, other=0.0002
    )
    records = []
    for i, (step, spent) in enumerate(zip(run.steps, seconds)):
        step.wall_s += spent
        step.phases["other"] += spent
        counters = {counter: spent, counter[:-2] + "s": 1.0} if spent else {}
        records.append(StepRecord(i, 0.0, 0.0, step.wall_s, step.phases, 64, 1, counters))
    mean = sum(seconds) / len(seconds)
    calls = sum(1 for spent in seconds if spent)
    typical = typical_per_step(records, (counter,))
    if counter == "save_s":
        run.io = IOObservation(
            saves_in_steps=calls, save_s_per_step=mean, save_s_per_step_typical=typical
        )
    else:
        run.io = IOObservation(
            prints_per_step=calls / len(seconds),
            print_s_per_step=mean,
            write_s_per_step_typical=typical,
            write_locations=["train.py:40"],
        )
    return run


def test_d701_d702_not_from_one_write_another_process_stalled():
    # a checkpoint / a log line every 4 steps, 0.1 ms each: well under 2% of a 13.7 ms step
    every_4 = [0.0001 if i % 4 == 3 else 0.0 for i in range(24)]
    stalled = list(every_4)
    stalled[11] = 0.060  # one write waited 60 ms for the CPU (a busy machine)
    for rule, counter in ((d701, "save_s"), (d702, "print_s")):
        assert rule.check(writing(counter, every_4)) == []
        assert rule.check(writing(counter, stalled)) == [], rule.CODE
    # a write that costs in every step it is made still does (20 ms every other step)
    costly = [0.020 if i % 2 else 0.0 for i in range(24)]
    costly[5] = 0.080
    assert only(d701.check(writing("save_s", costly)), "D701").details["save_share"] > 0.3
    assert only(d702.check(writing("print_s", costly)), "D702").details["print_share"] > 0.3


def test_typical_per_step_keeps_the_count_and_drops_one_stall():
    records = [StepRecord(i, 0.0, 0.0, 0.01, {}, 64, 1, {}) for i in range(8)]
    for i, spent in ((1, 0.001), (4, 0.001), (7, 0.5)):
        records[i].counters = {"print_s": spent}
    assert typical_per_step(records, ("print_s",)) == 0.001 * 3 / 8
    assert typical_per_step(records, ("save_s",)) == 0.0


def hot_json_line(samples: int, share: float):
    """A run whose line profile puts `share` of the step, `samples` samples, on a json.dump line
    outside the model (recognised work: file I/O)."""
    run = line_profiled_run()
    run.lines.lines = [
        LineStat(
            "train.py:70", "other", samples=samples, self_samples=samples, share=share,
            self_share=share, code="json.dump(metrics, f)", callees=["json.dump"],
        )
    ]  # fmt: skip
    return run


def test_d801_warns_on_a_share_its_samples_can_carry():
    # round 6: a 30% line from 5 samples was a warning (one stall on a busy machine is 5
    # samples); two standard deviations of 5 samples are 89% of them
    few = only(d801.check(hot_json_line(5, 0.3)), "D801")
    assert few.severity == "info" and few.details["samples"] == 5
    many = only(d801.check(hot_json_line(120, 0.3)), "D801")  # the same share, sampled well
    assert many.severity == "warning"


def test_d702_states_no_part_larger_than_its_total():
    """One stalled write: the print calls' mean (a part) came out above the typical total the
    evidence called what they "took" (round 13's note: a part larger than its total)."""
    costly = [0.020 if i % 2 else 0.0 for i in range(24)]
    costly[5] = 0.080
    text = evidence_text(only(d702.check(writing("print_s", costly)), "D702"))
    mean_ms = sum(costly) / len(costly) * 1000
    assert f"({mean_ms:.1f} ms), with the formatting" in text  # the part: the calls' mean
    assert f"took {mean_ms:.1f} ms per step on average; at the typical write's time" in text


def test_d212_estimate_is_capped_at_the_most_a_pair_on_the_copy_saw():
    """d212 at idle: the copy's pairs 0.41x-1.36x decided nothing, and the per-op estimate (a
    benchmark's extra time per op x ops per step) stated 90%, its cap, where `--try
    profiler_off` gained 28-38%. No pair saw the profiler cost more than its lowest ratio does:
    the estimate stays under that."""
    not_timed = profiled(1.0, None, op_overhead_s=1e-3)
    not_timed.whatif.timings.clear()  # no copy timed: the per-op estimate alone
    uncapped = only(d212.check(not_timed), "D212")
    capped = only(d212.check(profiled(1.0, (0.6, 1.1), op_overhead_s=1e-3)), "D212")
    assert uncapped.saving_basis == capped.saving_basis == "estimated"
    most = only(d212.check(profiled(0.6, (0.6, 0.6))), "D212")  # every pair at 0.6x: measured
    assert capped.saving == pytest.approx(most.saving) and capped.saving < uncapped.saving
    assert "capped at the most one pair saw" in capped.saving_how
    # pairs that saw less than the estimate's cost everywhere cap it further; a cheaper
    # estimate than the pairs' most is left as it is
    cheap = only(d212.check(profiled(1.0, (0.6, 1.1), op_overhead_s=1e-7)), "D212")
    assert cheap.saving < capped.saving and "capped" not in cheap.saving_how


def test_d212_says_where_its_pairs_put_the_cost_beside_the_median_it_states():
    """d212's stated cost moved from 19% to 59% of the step over 8 diagnoses at load 12-34:
    each is the median of pairs of blocks timed back to back, which one diagnosis's pairs
    can put 20 points apart. The finding says that range beside the median it states."""
    spread = only(d212.check(profiled(0.6, (0.5, 0.8))), "D212")
    assert spread.saving_basis == "measured"
    low, high = (
        int(x) for x in re.search(r"at (\d+)%-(\d+)% of the step", spread.saving_how).groups()
    )
    assert low < 100 * spread.saving < high
    assert any("pairs of blocks put it at" in line for line in spread.evidence)
    # pairs that agree within a point: no range said
    steady = only(d212.check(profiled(0.6, (0.6, 0.6))), "D212")
    assert "pairs of blocks" not in steady.saving_how
