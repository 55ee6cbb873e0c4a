"""--try measures until a fix's rounds agree (trials.analysis.unsettled, trials.runner) and over a
window long enough for a steady mean step (trials.cycle, min_seconds): without them a 10-step
window of 20 ms steps spread 30-50% from run to run, and no stated saving could be held to 1.5x.
Pure functions and the scheduler on recorded results; the real trial runs are in
test_try_trials.py."""

import math
from pathlib import Path

import pytest

from torchdoctor.diagnose.observations import RunObservation, StepObservation
from torchdoctor.program import Program
from torchdoctor.trials import runner
from torchdoctor.trials.analysis import SETTLED_SPREAD, unsettled
from torchdoctor.trials.cycle import MAX_CYCLE_STEPS, trial_window
from torchdoctor.trials.runner import RunOutcome, TrialPlan, run_plan

SCRIPT = str(Path(__file__).parent / "scripts" / "prefetch_warmup.py")  # never run here


def outcome(wall_s: float, cpu_s: float, fixes=("autocast",)) -> RunOutcome:
    steps = [{"wall_s": wall_s, "cpu_s": cpu_s, "samples": 8, "loss": 1.0}] * 4
    result = {
        "failed_fixes": {},
        "status": "stopped",
        "used_fixes": list(fixes),
        "steps": steps,
        "peak_memory_bytes": 1,
        "memory_source": "process_rss",
    }
    return RunOutcome("x", result, 0, "", 1.0)


def test_a_fix_is_unsettled_while_its_rounds_disagree_on_its_own_clock():
    configs = {"baseline": [], "autocast": ["autocast"], "workers": ["workers"]}
    base = [outcome(0.2, 0.1), outcome(0.2, 0.1), outcome(0.2, 0.1)]
    outcomes = {
        "baseline": base,
        # compute fix on a CPU: read in CPU time, where its rounds agree (wall swings with load)
        "autocast": [outcome(0.1, 0.05), outcome(0.18, 0.05), outcome(0.12, 0.05)],
        # loader fix: read in wall time, where 2x and 1.25x disagree
        "workers": [
            outcome(0.1, 0.1, ["workers"]),
            outcome(0.16, 0.1, ["workers"]),
            outcome(0.1, 0.1, ["workers"]),
        ],
    }
    assert unsettled(configs, outcomes, 1, "cpu") == ["workers"]
    outcomes["workers"] = [outcome(0.1, 0.1, ["workers"])] * 3
    assert unsettled(configs, outcomes, 1, "cpu") == []
    # fewer rounds than a verdict needs: unsettled however close they are
    assert unsettled(configs, {k: v[:2] for k, v in outcomes.items()}, 1, "cpu") == [
        "autocast",
        "workers",
    ]
    # settled means within SETTLED_SPREAD
    spread = 1 + SETTLED_SPREAD / 2
    outcomes["workers"] = [
        outcome(0.1, 0.1, ["workers"]),
        outcome(0.1 * spread, 0.1, ["workers"]),
        outcome(0.1, 0.1, ["workers"]),
    ]
    assert unsettled(configs, outcomes, 1, "cpu") == []


def test_further_rounds_run_the_baseline_beside_the_unsettled_fixes_only(monkeypatch):
    """Rounds 4..6 hold the baseline and the fix whose rounds disagree; the settled one keeps its
    three runs, so run i of every configuration is from round i (the speedups pair them)."""
    ran: list[str] = []

    def fake_run_one(plan, name, workdir):
        ran.append(name)
        return outcome(0.2, 0.1)

    monkeypatch.setattr(runner, "run_one", fake_run_one)
    configs = {"baseline": [], "steady": ["a"], "swinging": ["b"]}
    plan = TrialPlan(Program(SCRIPT), configs, steps=5, repeats=3, max_repeats=6)
    seen = []

    def still_unsettled(runs):
        seen.append({k: len(v) for k, v in runs.outcomes.items()})
        return ["swinging"]

    runs = run_plan(plan, None, still_unsettled)
    assert {k: len(v) for k, v in runs.outcomes.items()} == {
        "baseline": 6,
        "steady": 3,
        "swinging": 6,
    }
    assert ran[9:] == ["swinging", "baseline", "baseline", "swinging", "swinging", "baseline"]
    assert seen[0] == {"baseline": 3, "steady": 3, "swinging": 3} and len(seen) == 3
    ran.clear()
    settled_plan = TrialPlan(Program(SCRIPT), configs, steps=5, repeats=3, max_repeats=6)
    run_plan(settled_plan, None, lambda runs: [])
    assert len(ran) == 9  # every fix settled after the planned rounds: nothing more


def steps(count: int, wall_s: float, evaluated=()) -> list[StepObservation]:
    return [
        StepObservation(i, wall_s, {}, evaluation_s=0.05 if i in evaluated else 0.0)
        for i in range(count)
    ]


def test_the_window_is_stretched_to_last_the_minimum_time_in_whole_cycles():
    fast = RunObservation("t.py", steps=steps(12, 0.02))
    assert trial_window(10, fast).steps == 10  # no minimum asked: as before
    window = trial_window(10, fast, min_seconds=2.0)
    assert window.steps == 100 and "stretched from 10" in window.note
    cycled = RunObservation("t.py", steps=steps(12, 0.02, evaluated=(5, 11)))  # a 6-step cycle
    assert trial_window(10, cycled, min_seconds=2.0).steps % 6 == 0
    slow = RunObservation("t.py", steps=steps(12, 0.5))
    assert trial_window(10, slow, min_seconds=2.0).steps == 10  # 10 steps already last 5 s
    tiny = RunObservation("t.py", steps=steps(12, 1e-6))
    assert trial_window(10, tiny, min_seconds=2.0).steps == MAX_CYCLE_STEPS


def test_the_table_title_says_when_further_rounds_ran():
    from types import SimpleNamespace

    from torchdoctor.trials.render import _rounds

    def report(repeats, baseline_runs):
        return SimpleNamespace(repeats=repeats, baseline=SimpleNamespace(runs=baseline_runs))

    assert _rounds(report(3, 3)) == "3 repeats"
    assert _rounds(report(3, 5)) == "3 repeats (up to 5 where a fix's rounds disagreed)"
    assert _rounds(report(1, 2)) == "1 repeats"  # one repeat: the baseline's second run


def test_a_caller_holding_the_gain_to_a_claim_gets_rounds_while_the_claim_is_undecided():
    configs = {"baseline": [], "autocast": ["autocast"]}
    base = [outcome(0.2, 0.1)] * 3
    # CPU-time speedups 1.08, 1.12, 1.15: settled within SETTLED_SPREAD, a gain of 7%-13%
    fix = [outcome(0.2, 0.1 / r) for r in (1.08, 1.12, 1.15)]
    outcomes = {"baseline": base, "autocast": fix}
    asked = []

    def wants_more(name, speedups):
        asked.append((name, speedups.count))
        return speedups.low < 1.1 < speedups.high  # a claim of 1.1x: the rounds straddle it

    assert unsettled(configs, outcomes, 1, "cpu") == []
    assert unsettled(configs, outcomes, 1, "cpu", wants_more) == ["autocast"]
    assert asked == [("autocast", 3)]
    outcomes["autocast"] = [outcome(0.2, 0.1 / r) for r in (1.12, 1.13, 1.15)]
    assert unsettled(configs, outcomes, 1, "cpu", wants_more) == []


def test_where_the_median_lies_narrows_as_rounds_are_added():
    from torchdoctor.trials.stats import median_range

    assert median_range([3.0, 1.0, 2.0]) == (1.0, 3.0)  # 3 rounds: their whole range
    six = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert median_range(six) == (2.0, 5.0)  # the extremes out
    twelve = [float(v) for v in range(1, 13)]
    assert median_range(twelve) == (4.0, 9.0)  # three out at each end
    # a sign test: the median lies between the 4th smallest and largest of 12 with 85% chance
    assert median_range(twelve, coverage=0.9) == (3.0, 10.0)


def test_the_signed_rank_interval_reads_every_round_and_is_narrower_than_the_sign_test():
    from torchdoctor.trials.stats import DECIDE_COVERAGE, gain_interval, median_range

    low, high = gain_interval([3.0, 1.0, 2.0])  # 3 rounds reach 75% only with their whole range
    assert (round(low, 9), round(high, 9)) == (1.0, 3.0)
    assert gain_interval([1.1, 1.2, 1.3, 1.4], DECIDE_COVERAGE) is None  # 4 rounds cannot: 87.5%
    # d201's float32 rounds (CPU time, 8 rounds at load 4)
    rounds = [1.638, 1.895, 1.757, 1.559, 1.772, 1.554, 1.417, 1.684]
    sign_low, sign_high = median_range(rounds)
    low, high = gain_interval(rounds)
    assert sign_low < low < high < sign_high
    assert math.log(high / low) < 0.7 * math.log(sign_high / sign_low)  # 8.5% wide, not 14%
    # one disturbed round (4x) moves it some 1% at the low end and 6% at the top (the mean of
    # the log ratios, a normal law's centre, moves 11%)
    disturbed = gain_interval([*rounds[:-1], 4.0])
    assert disturbed[0] == pytest.approx(low, rel=0.02) and disturbed[1] < 1.85


def test_another_round_runs_while_a_gain_beyond_min_gain_is_neither_shown_nor_ruled_out():
    configs = {"baseline": [], "autocast": ["autocast"]}
    base = [outcome(0.2, 0.1)] * 6
    # CPU-time rounds 0.97x-1.12x: within SETTLED_SPREAD, but 1.10x is not ruled out
    wide = [outcome(0.2, 0.1 / r) for r in (0.97, 1.12, 1.0, 1.1, 1.03, 1.08)]
    assert unsettled(configs, {"baseline": base, "autocast": wide}, 1, "cpu") == ["autocast"]
    # rounds 1.03x-1.07x: the 90% interval is above 1x, decided
    tight = [outcome(0.2, 0.1 / r) for r in (1.03, 1.05, 1.07, 1.04, 1.06, 1.05)]
    assert unsettled(configs, {"baseline": base, "autocast": tight}, 1, "cpu") == []
    # rounds 0.99x-1.02x: any gain is below MIN_GAIN; no clear gain, settled
    none = [outcome(0.2, 0.1 / r) for r in (0.99, 1.02, 1.0, 1.01, 0.995, 1.005)]
    assert unsettled(configs, {"baseline": base, "autocast": none}, 1, "cpu") == []
