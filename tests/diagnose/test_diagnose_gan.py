"""Two optimizers, one iteration (a GAN): one training step per iteration, closed by the last
optimizer of the iteration (the generator's); the generator's output, which gets its gradient
only after the discriminator's update, is a training forward, not evaluation; start-up time
before the first step is never booked as evaluation; one backward fed by several forwards, and
two updates on one batch, count its samples once."""

import pytest

from torchdoctor.diagnose.optimizer_cycle import OptimizerCycle

MODELS = """
Z, BATCH = 8, 32
G = nn.Sequential(nn.Linear(Z, 32), nn.ReLU(), nn.Linear(32, 2))
D = nn.Sequential(nn.Linear(2, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
optG = torch.optim.Adam(G.parameters(), lr=2e-4)
optD = torch.optim.Adam(D.parameters(), lr=2e-4)
bce = nn.BCEWithLogitsLoss()
"""
ITERATION = """
    fake = G(torch.randn(BATCH, Z))
    optD.zero_grad()
    lossD = bce(D(real), torch.ones(BATCH, 1)) + bce(D(fake.detach()), torch.zeros(BATCH, 1))
    lossD.backward()
    optD.step()
    optG.zero_grad()
    lossG = bce(D(fake), torch.ones(BATCH, 1))
    lossG.backward()
    optG.step()
"""
GAN = (
    MODELS
    + """
real_data = torch.randn(1000, 2)
with torch.no_grad():
    G(torch.randn(4, Z))  # a sanity check before training: evaluation, measured from its start
time.sleep(0.3)  # slow start-up (data, imports): not evaluation
for it in range(40):
    real = real_data[torch.randint(0, 1000, (BATCH,))]"""
    + ITERATION
)


def test_generator_forward_is_training_and_startup_is_not_evaluation(diagnose_here):
    # no DataLoader: D stepping again tells where an iteration ends (one step per iteration)
    report = diagnose_here(GAN, steps=8, warmup=3)
    run = report.run
    assert run.status == "stopped" and len(run.steps) == 8
    evaluation = run.evaluation
    assert evaluation.forwards == 1 and evaluation.under_no_grad == 1  # only the sanity check
    assert evaluation.with_grad == 0
    # the sanity check's own forward is all the evaluation time (the 0.3 s sleep is not): a
    # comparison of two records of one run; beside a second test worker and a busy loop that
    # forward alone took 0.14 s, over the 0.1 s bar this test had
    assert evaluation.seconds == pytest.approx(evaluation.forward_seconds), (
        "the 0.3 s start-up was booked as evaluation"
    )
    assert "D301" not in {f.id for f in report.findings}
    assert [s.batch_size for s in run.steps] == [32] * 8
    # iteration 1 (learning the cycle) closed warm-up steps 0 and 1; iterations 2..10 one each
    assert sum(o.steps for o in run.optimizers) == 2 * 10
    assert all(s.evaluation_s == 0 for s in run.steps)


# A GAN fed by a DataLoader; every iteration starts by logging its index to a file, so the test
# knows how many iterations the program ran before it was stopped.
GAN_LOADER = (
    MODELS
    + """
loader = DataLoader(TensorDataset(torch.randn(4000, 2)), batch_size=BATCH)
log = open(sys.argv[1], "w")
for it, (real,) in enumerate(loader):
    print(it, file=log, flush=True)"""
    + ITERATION
)


def test_two_optimizers_make_one_step_per_iteration(diagnose_here, tmp_path):
    # the first iteration teaches the cycle (D then G): it closes 2 warm-up steps, every later
    # iteration closes one, at G's step. 3 warm-up + 8 measured steps = 10 iterations.
    log = tmp_path / "iterations.txt"
    report = diagnose_here(GAN_LOADER, steps=8, warmup=3, args=[str(log)])
    run = report.run
    assert run.status == "stopped" and len(run.steps) == 8
    assert log.read_text().split() == [str(i) for i in range(10)]
    # each step holds both updates, one backward each: not gradient accumulation
    assert [s.micro_batches for s in run.steps] == [1] * 8
    assert [s.batch_size for s in run.steps] == [32] * 8
    assert all(s.phases.get("data", 0) > 0 and s.phases.get("backward", 0) > 0 for s in run.steps)
    assert sum(o.steps for o in run.optimizers) == 2 * 10
    assert report.samples_per_s == pytest.approx(32 / report.step_time_s)


def _closes(cycle: OptimizerCycle, events: str) -> str:
    """events: optimizer names, "|" for a data fetch. Returns, per event, the optimizer that
    closed a step, "." for none, "!" for a fetch that closed one ("" for a fetch that did not)."""
    closed = []
    for event in events:
        if event == "|":
            closed.append("!" if cycle.iteration_ended() else "")
        else:
            closed.append(event if cycle.stepped(ord(event)) else ".")
    return "".join(closed)


def test_optimizer_cycle_without_loader_and_when_it_changes():
    # no DataLoader: D stepping again starts the next iteration
    assert _closes(OptimizerCycle(), "DGDGDG") == "DG.G.G"
    # one optimizer: every step closes
    assert _closes(OptimizerCycle(), "|A|A|A") == "AAA"
    assert _closes(OptimizerCycle(), "AAA") == "AAA"
    # G stops stepping (frozen): the D-only iteration is closed at the next fetch, then learned
    assert _closes(OptimizerCycle(), "|DG|DG|D|D|D") == "DG.G.!DD"
