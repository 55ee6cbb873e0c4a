"""The verdict on real scripts is drawn from typical steps: one slow step does not flip it, and a
run that ended within warm-up (start-up costs included) gets no bound verdict at all."""

import pytest

from torchdoctor.diagnose.report import prose

# Forward, backward and optimizer of an MLP are nearly all of a step (~10-20 ms: large against
# the ~10 ms scheduler stalls of a loaded test machine); one measured step also sleeps 0.5 s
# outside the model (a one-off stall, e.g. the OS preempting the process).
ONE_SLOW_STEP = """
model = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(256, 512), torch.randint(0, 10, (256,))
for step in range(20):
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step == 6:
        time.sleep(0.5)
"""


# decides from step times (a planted 0.5 s stall against ~ms steps, a preemption or two on a
# loaded machine): run with the timing tests, one at a time
@pytest.mark.timing
def test_one_outlier_step_does_not_flip_the_verdict(diagnose_here):
    report = diagnose_here(ONE_SLOW_STEP, steps=8, warmup=3)
    walls = [s.wall_s for s in report.run.steps]
    assert max(walls) > 0.5  # the planted stall is in a measured step...
    assert report.reason.bound.kind == "compute", report.verdict  # ...and not the verdict
    assert report.breakdown["other"] < 0.5
    assert report.step_time_s < 0.2
    # the phases shown add up to the median step shown beside them
    assert sum(report.phase_seconds.values()) == pytest.approx(report.step_time_s)
    # the planted stall, plus at most one preemption on a loaded machine (a 10-100 ms stall)
    spread = report.spread
    assert spread is not None and spread.left_out and spread.steps == 8, report.step_notes
    assert spread.outliers in (1, 2) and spread.slowest_s > 0.5, report.step_notes
    assert report.step_notes == [prose.spread_note(spread)]
    assert "left out of the breakdown" in report.step_notes[0]


CRASH_IN_WARMUP = """
time.sleep(0.3)  # slow start-up: imports, data
model = nn.Linear(8, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(10):
    if step == 3:
        raise RuntimeError("corrupted batch 3")
    loss = model(torch.randn(4, 8)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def test_a_run_that_ends_within_warmup_gets_no_bound_verdict(diagnose_here):
    report = diagnose_here(CRASH_IN_WARMUP, steps=8, warmup=3)
    run = report.run
    assert run.status == "crashed" and run.warmup_only and len(run.steps) == 3
    assert report.verdict == (
        "too few steps to measure: 3 ran, all warm-up "
        "(the script crashed: RuntimeError: corrupted batch 3)"
    )
    assert report.breakdown == {} and report.phase_seconds == {}
    assert report.step_time_s is None and report.dominant_phase is None
    assert report.to_dict()["steps"] == 0

    exits = CRASH_IN_WARMUP.replace('raise RuntimeError("corrupted batch 3")', "sys.exit(3)")
    finished = diagnose_here(exits, steps=8)
    assert finished.run.status == "completed" and finished.run.exit_code == 3
    assert finished.verdict.startswith("too few steps to measure: 3 ran, all warm-up (use a")


def test_host_overhead_verdict_says_when_no_model_call_was_seen(diagnose_here):
    """Raw tensor math as the model: its forward cannot be told apart from other host work, so
    the verdict must not blame logging or checkpoints alone."""
    report = diagnose_here(
        """
        w = torch.randn(64, 1, requires_grad=True)
        x = torch.randn(256, 64)
        for step in range(20):
            loss = torch.tanh(x @ w).pow(2).mean()
            time.sleep(0.02)  # host work the run really spends: "other" dominates
            loss.backward()
            with torch.no_grad():
                w -= 0.01 * w.grad
                w.grad = None
        """,
        steps=5,
        warmup=2,
    )
    assert report.run.models == []
    bound = report.reason.bound
    assert bound.kind == "other" and not bound.model_seen, report.verdict
    assert "no nn.Module call was seen" in report.verdict
    assert "logging" not in report.verdict


# "evaluation-heavy" rests on a share of wall time (acting forwards against the updates): it missed
# once beside a second test worker (fresh-clone CI, round 6), so it runs with the timing tests
@pytest.mark.timing
def test_loop_dominated_by_no_grad_acting_forwards_says_so_first(diagnose_here):
    """An RL-style loop: a no-grad policy forward per environment step (its output is an action,
    never a loss), one gradient update every 4 environment steps."""
    report = diagnose_here(
        """
        policy = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 2))
        opt = torch.optim.SGD(policy.parameters(), lr=0.01)
        state = torch.randn(1, 8)
        for t in range(200):
            with torch.no_grad():
                action = policy(state).argmax(1)
            time.sleep(0.002)  # the environment's step
            state = torch.randn(1, 8)
            if t % 4 == 3:
                loss = policy(torch.randn(32, 8)).pow(2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
        """,
        steps=5,
        warmup=2,
    )
    assert report.run.evaluation.under_no_grad >= 15
    assert report.reason.evaluation_share > 0.5, report.verdict
    # one observation per forward against a training batch of 32: the program acts (RL)
    assert report.reason.evaluation_is_acting, report.verdict
    assert "acting-heavy" in report.verdict and "within the update steps, " in report.verdict


def test_an_evaluation_before_the_measured_steps_is_not_the_measured_times(diagnose_here):
    """minGPT's adder evaluates the whole test set at iteration 0 (`iter_num % 500 == 0`), in
    warm-up: the verdict read "evaluation-heavy: 95% of the measured time ran forwards whose
    outputs never got a gradient" of 20 measured steps with no evaluation in them."""
    report = diagnose_here(
        """
        model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 10))
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        for it in range(40):
            if it == 0:  # the whole test set, once
                with torch.no_grad():
                    for _ in range(300):
                        model(torch.randn(512, 64)).argmax(1)
            loss = model(torch.randn(16, 64)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        steps=6,
        warmup=2,
    )
    run = report.run
    assert run.evaluation.seconds > sum(s.wall_s for s in run.steps), run.evaluation
    assert sum(s.evaluation_s for s in run.steps) == 0
    assert not report.verdict.startswith("evaluation-heavy"), report.verdict
