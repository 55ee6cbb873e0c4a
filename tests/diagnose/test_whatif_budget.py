"""The what-if budget is a hard limit for the interleaved timings (whatif/guard.py): a timing
whose warm-up shows that its fewest rounds would not fit in what is left refuses to start them,
and a timing whose rounds agree stops early, leaving its time to the probes after it. Decided
from structure (sleeps that can only get longer under load, a scripted clock), not from how fast
this machine is."""

import time

import pytest

from torchdoctor.diagnose.whatif.guard import (
    MAX_ROUNDS,
    MIN_ROUNDS,
    Budget,
    OverBudget,
    interleaved_medians,
    settled,
)


class ScriptedClock:
    """A clock whose consecutive start/end pairs are `durations` apart, in turn."""

    def __init__(self, durations):
        self.durations, self.now, self.calls = list(durations), 0.0, 0

    def __call__(self) -> float:
        if self.calls % 2:  # an end: advance by the next duration
            self.now += self.durations[(self.calls // 2) % len(self.durations)]
        self.calls += 1
        return self.now


def test_a_timing_that_cannot_finish_its_rounds_within_the_budget_does_not_start_them():
    calls = []

    def slow():
        calls.append(1)
        time.sleep(0.05)

    budget = Budget(0.2)  # a round of the two variants takes >= 0.1 s: 3 rounds do not fit
    with budget.active(), pytest.raises(OverBudget):
        interleaved_medians({"as run": slow, "fix": slow}, "cpu", allowance_s=1.0)
    assert len(calls) == 2  # the warm-up only: no round was started
    # outside an active budget the allowance is soft, as before: the fewest rounds always run
    medians, rounds = interleaved_medians({"as run": slow, "fix": slow}, "cpu", allowance_s=0.0)
    assert rounds == MIN_ROUNDS and set(medians) == {"as run", "fix"}


def test_a_timing_stops_once_its_rounds_agree_and_goes_on_while_they_disagree():
    def work():
        return None

    steady = ScriptedClock([2.0, 1.0])  # as run 2, fix 1, every round
    _, rounds = interleaved_medians({"as run": work, "fix": work}, "cpu", 10.0, steady)
    assert rounds == MIN_ROUNDS
    swinging = ScriptedClock([2.0, 1.0, 2.0, 1.6])  # the fix's ratio swings 0.5 / 0.8
    medians, rounds = interleaved_medians({"as run": work, "fix": work}, "cpu", 10.0, swinging)
    assert rounds == MAX_ROUNDS and medians["as run"] == 2.0


def test_rounds_agree_when_every_alternatives_ratio_to_the_work_as_run_is_steady():
    assert settled({"as run": [2.0, 4.0, 3.0], "fix": [1.0, 2.0, 1.5]})  # load moved both alike
    assert not settled({"as run": [2.0, 2.0, 2.0], "fix": [1.0, 1.0, 1.5]})
    assert not settled({"as run": [2.0, 2.0], "fused": [1.0, 1.0], "foreach": [1.0, 1.9]})


def test_rounds_agree_when_a_large_gain_is_steady_though_its_ratio_is_not():
    # a fused step at 0.25x-0.45x: ratios 80% apart, gains 55%-75%, within the 1.5x a stated
    # saving is held to
    assert settled({"as run": [4.0, 4.0, 4.0], "fused": [1.0, 1.8, 1.4]})
    # ratios near 1 are a gain of 2%-25%: more rounds are worth their time
    assert not settled({"as run": [4.0, 4.0, 4.0], "fix": [3.0, 3.9, 3.5]})
    # a fix slower in one round has no steady gain
    assert not settled({"as run": [4.0, 4.0, 4.0], "fix": [1.0, 4.4, 1.1]})


def test_rounds_the_warm_up_sized_stop_once_their_allowance_is_spent_in_wall_time():
    # the warm-up is quick, every round after it slow, as when the machine's load rises: the
    # warm-up sizes 15 rounds (about 1.2 s), and the rounds stop after the fewest (0.25 s) once
    # the 0.2 s allowance is spent; the old code ran all 15 (the fix's swinging ratio, 0.6x / 1x,
    # never lets the rounds agree)
    calls = []

    def as_run():
        time.sleep(0.001 if not calls else 0.05)

    def fix():
        calls.append(1)
        time.sleep(0.001 if len(calls) == 1 else 0.03 if len(calls) % 2 else 0.05)

    _, rounds = interleaved_medians(
        {"as run": as_run, "fix": fix}, "cpu", allowance_s=0.2, clock=time.perf_counter
    )
    assert rounds == MIN_ROUNDS, rounds


def test_the_fewest_rounds_stop_once_the_budget_is_spent_by_rounds_slower_than_the_warm_up():
    # the warm-up (2 ms a round) sizes 3 rounds into a 0.08 s budget; each round then takes
    # 0.1 s: the first spends the budget and the second is not begun (the old code ran all 3)
    calls = []

    def slowing():
        calls.append(1)
        time.sleep(0.001 if len(calls) <= 2 else 0.05)

    budget = Budget(0.08)
    with budget.active(), pytest.raises(OverBudget):
        interleaved_medians({"as run": slowing, "fix": slowing}, "cpu", allowance_s=1.0)
    assert len(calls) <= 4  # the warm-up and at most one round (a slow warm-up: none)


def test_a_warm_up_that_cannot_fit_after_the_first_one_is_not_begun():
    # each warm-up call takes 0.1 s: after the first, 0.02 s of a 0.12 s budget is left, and the
    # second is not begun (the old code ran both, then refused the rounds)
    calls = []

    def slow():
        calls.append(1)
        time.sleep(0.1)

    budget = Budget(0.12)
    with budget.active(), pytest.raises(OverBudget, match="warm-up"):
        interleaved_medians({"as run": slow, "fix": slow}, "cpu", allowance_s=1.0)
    assert len(calls) == 1


def test_a_short_runs_budget_is_raised_to_the_workers_probes_floor_and_no_further():
    """d101 ran 1.5 s: 0.15 s of what-if budget, the workers probe (floor ~0.2 s) never fitted and
    D101 stated an estimate ten times the gain `--try workers` found. The budget is raised to
    what is spent plus that probe's floor, at most to the cap given, and only where it is planned."""
    from types import SimpleNamespace

    from torchdoctor.diagnose.whatif import RAISED_FOR, _raised

    workers = RAISED_FOR[0]

    spent = iter([0.0, 0.05, 0.05, 0.05, 0.05, 0.05])  # the budget starts, then 50 ms are spent
    budget = Budget(0.15, clock=lambda: next(spent))
    plan = SimpleNamespace(floors={workers: 0.2}, raise_only={}, items=[(0.3, workers, None)])
    assert _raised(plan, budget, most_s=0.4) == pytest.approx(0.25)  # spent + the floor
    assert _raised(plan, budget, most_s=0.2) == pytest.approx(0.2)  # the cap holds
    plan.floors[workers] = 0.05  # the floor fits in the budget: not raised
    assert _raised(plan, budget, most_s=0.4) == pytest.approx(0.15)
    plan.items = []  # not planned (no data wait, or an unsupported loader): not raised
    plan.floors[workers] = 0.2
    assert _raised(plan, budget, most_s=0.4) == pytest.approx(0.15)


def test_a_larger_batchs_warm_up_is_predicted_at_its_multiple_of_the_first():
    # the first warm-up takes 0.05 s; x4 does four times its work: 0.2 s, more than the 0.12 s
    # left of a 0.17 s budget, so it is not begun (at "the longest so far" it looked like 0.05 s)
    calls = []

    def work(seconds):
        def run():
            calls.append(seconds)
            time.sleep(seconds)

        return run

    budget = Budget(0.17)
    with budget.active(), pytest.raises(OverBudget, match="warm-up of 'x4'"):
        interleaved_medians(
            {"as run": work(0.05), "x4": work(0.2)}, "cpu", allowance_s=1.0, work_scale={"x4": 4.0}
        )
    assert calls == [0.05]


def test_a_probe_first_in_line_leaves_the_later_probes_floor_whatever_its_fewest_rounds_need():
    """d302: the larger-batch probe (the largest stake, first) spent all of a 0.53 s budget on
    its fewest rounds, and the evaluation probe after it, whose floor was planned, was skipped:
    D302 stated 0% (estimated) where `--try eval_mode` gained 16%. The first probe's rounds
    now refuse where they would eat into that floor; the later probe gets it."""
    from types import SimpleNamespace

    from torchdoctor.diagnose.whatif import _run_plan

    def probe(seconds):
        def work(allowance):
            def call():
                time.sleep(seconds)

            medians, _ = interleaved_medians({"as run": call, "fix": call}, "cpu", allowance)
            return [medians]

        return work

    # the first: 0.22 s of warm-up and 0.66 s of fewest rounds, 0.88 s of a 1 s budget; the
    # later one's floor is 0.2 s (it needs 0.16 s)
    run = SimpleNamespace(whatif=SimpleNamespace(timings=[], skipped=[]))
    plan = SimpleNamespace(
        run=run,
        items=[(0.6, "first", probe(0.11)), (0.2, "later", probe(0.02))],
        floors={"later": 0.2},
        least={},
    )
    _run_plan(plan, Budget(1.0))
    assert len(run.whatif.timings) == 1, run.whatif.skipped  # the later probe's
    assert run.whatif.skipped and run.whatif.skipped[0].startswith("first: over the time budget")
