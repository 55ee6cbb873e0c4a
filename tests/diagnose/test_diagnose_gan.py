"""Two optimizers, one iteration (a GAN): the generator's output gets its gradient only after the
discriminator's optimizer step closed the step G ran in. It is a training forward, not
evaluation; start-up time before the first step is never booked as evaluation; one backward fed
by several forwards counts its samples once."""

GAN = """
Z, BATCH = 8, 32
G = nn.Sequential(nn.Linear(Z, 32), nn.ReLU(), nn.Linear(32, 2))
D = nn.Sequential(nn.Linear(2, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
optG = torch.optim.Adam(G.parameters(), lr=2e-4)
optD = torch.optim.Adam(D.parameters(), lr=2e-4)
bce = nn.BCEWithLogitsLoss()
real_data = torch.randn(1000, 2)
with torch.no_grad():
    G(torch.randn(4, Z))  # a sanity check before training: evaluation, measured from its start
time.sleep(0.3)  # slow start-up (data, imports): not evaluation
for it in range(40):
    real = real_data[torch.randint(0, 1000, (BATCH,))]
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


def test_generator_forward_is_training_and_startup_is_not_evaluation(diagnose_here):
    # warm-up 3 + 8 measured: the last measured step is a discriminator step, whose generator
    # forward is decided by the generator step after it
    report = diagnose_here(GAN, steps=8, warmup=3)
    run = report.run
    assert run.status == "stopped" and len(run.steps) == 8
    evaluation = run.evaluation
    assert evaluation.forwards == 1 and evaluation.under_no_grad == 1  # only the sanity check
    assert evaluation.with_grad == 0
    assert evaluation.seconds < 0.1, "the 0.3 s start-up was booked as evaluation"
    assert "D301" not in {f.id for f in report.findings}
    assert [s.batch_size for s in run.steps] == [32] * 8
    assert all(s.evaluation_s == 0 for s in run.steps)
