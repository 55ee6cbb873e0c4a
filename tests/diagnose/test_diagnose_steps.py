"""Step delimiting on real scripts: optimizer steps with gradient accumulation, manual updates
without an optimizer, evaluation forwards cut out of training steps."""


def test_gradient_accumulation_makes_one_step_of_several_micro_batches(diagnose_here):
    run = diagnose_here(
        """
        model = nn.Linear(8, 2)
        opt = torch.optim.AdamW(model.parameters())
        for i in range(24):
            loss = model(torch.randn(4, 8)).pow(2).mean() / 3
            loss.backward()
            if (i + 1) % 3 == 0:
                opt.step()
                opt.zero_grad(set_to_none=False)
        """,
        steps=0,
        warmup=2,
    ).run
    assert run.status == "completed"
    assert len(run.steps) == 8 - 2
    assert all(s.micro_batches == 3 and s.batch_size == 12 for s in run.steps)
    assert not run.manual_updates
    optimizer = run.optimizers[0]
    assert optimizer.class_name == "AdamW" and optimizer.steps == 8
    assert optimizer.set_to_none is False
    # exp_avg and exp_avg_sq are the size of the parameters; plus one scalar step per tensor
    assert 2 * optimizer.param_bytes < optimizer.state_bytes <= 2 * optimizer.param_bytes + 16
    assert all(s.loss is not None and s.loss > 0 for s in run.steps)


def test_without_optimizer_each_backward_is_a_step(diagnose_here):
    run = diagnose_here(
        """
        w = torch.randn(8, 1, requires_grad=True)
        for i in range(10):
            loss = (torch.randn(16, 8) @ w).pow(2).mean()
            loss.backward()
            with torch.no_grad():
                w -= 0.01 * w.grad
                w.grad = None
        """,
        steps=5,
        warmup=2,
    ).run
    assert run.manual_updates
    assert run.status == "stopped" and len(run.steps) == 5
    assert run.optimizers == []
    assert any("no torch.optim optimizer" in note for note in run.notes)


def test_without_optimizer_each_autograd_grad_is_a_step(diagnose_here):
    run = diagnose_here(
        """
        net = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))
        params = list(net.parameters())
        for i in range(50):
            x = torch.randn(16, 8)
            loss = (net(x) - x.sum(1, keepdim=True)).pow(2).mean()
            grads = torch.autograd.grad(outputs=loss, inputs=params)
            with torch.no_grad():
                for p, g in zip(params, grads):
                    p.add_(g, alpha=-0.01)
        print("ran to the end")
        """,
        steps=5,
        warmup=2,
    ).run
    assert run.manual_updates
    assert run.status == "stopped" and len(run.steps) == 5
    assert all(s.batch_size == 16 and s.phases["backward"] > 0 for s in run.steps)
    assert all(s.loss is not None for s in run.steps)
    assert run.evaluation.forwards == 0


def test_evaluation_forwards_are_cut_out_of_training_steps(diagnose_here):
    run = diagnose_here(
        """
        model = nn.Sequential(nn.Linear(16, 16), nn.Dropout(0.1), nn.Linear(16, 2))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        val = torch.randn(8, 16)
        for step in range(8):
            loss = model(torch.randn(8, 16)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            # validation every step, written three ways; the slow one sleeps inside the forward
            with torch.no_grad():
                model(val)
            with torch.inference_mode():
                model(val)
            time.sleep(0.05)
            model(val).sum()  # forgot no_grad and eval(): autograd graph built for nothing
        """,
        steps=4,
        warmup=2,
    ).run
    evaluation = run.evaluation
    # three validation forwards after each of the 6 optimizer steps before the stop at the 7th:
    # the last measured step (the 6th) held a forward with autograd on, so one more unmeasured
    # step ran to see that its output never gets a gradient
    assert evaluation.forwards == 3 * 6
    assert evaluation.under_no_grad == 6
    assert evaluation.under_inference_mode == 6
    assert evaluation.with_grad == 6
    assert evaluation.in_train_mode == 18
    assert evaluation.train_mode_sensitive  # Dropout
    assert evaluation.seconds > 5 * 0.05
    assert len(run.steps) == 4
    for step in run.steps:
        assert step.batch_size == 8  # only the training forward counts
        assert step.evaluation_s >= 0.05  # the sleep was inside the evaluation span...
        # ...and is not part of the training step (relative: a busy machine slows both)
        assert step.wall_s < step.evaluation_s


def test_grad_scaler_steps_clipping_before_unscale_and_the_unscaled_loss(diagnose_here):
    run = diagnose_here(
        """
        model = nn.Linear(8, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
        for i in range(8):
            with torch.autocast("cpu", torch.bfloat16):
                loss = model(torch.ones(4, 8)).float().pow(2).mean() + 1.0
            scaler.scale(loss).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # still scaled: wrong
            scaler.step(opt)
            scaler.update()
            opt.zero_grad()
        """,
        steps=4,
        warmup=2,
    ).run
    assert run.status == "stopped" and len(run.steps) == 4
    optimizer = run.optimizers[0]
    assert optimizer.grad_scaler and optimizer.clip_before_unscale == 6
    assert run.precision.autocast_forwards == 4 and run.precision.autocast_dtype == "bfloat16"
    assert all(1.0 <= step.loss < 100 for step in run.steps)  # the loss, not loss * 1024


def test_a_bare_except_around_the_step_does_not_keep_the_program_running(diagnose_here, capsys):
    import sys

    tracer = sys.gettrace()
    report = diagnose_here(
        """
        model = nn.Linear(8, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        swallowed = 0
        for step in range(3000):
            try:
                loss = model(torch.randn(4, 8)).pow(2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
            except:  # "skip bad batches": also catches StopDiagnosis
                swallowed += 1
                continue
        print("ran to the end, swallowed", swallowed)
        """,
        steps=4,
        warmup=2,
    )
    assert "ran to the end" not in capsys.readouterr().out
    assert report.run.status == "stopped" and len(report.run.steps) == 4
    assert sys.gettrace() is tracer  # a debugger's or coverage's tracer is given back


def test_a_run_to_its_end_keeps_a_bounded_number_of_steps(tmp_path):
    """--steps 0 on a long run: only the latest steps stay in memory (and in the report)."""
    from torchdoctor.diagnose.observe import build_run
    from torchdoctor.diagnose.runner import run_program
    from torchdoctor.diagnose.session import DiagnoseConfig, Session
    from torchdoctor.program import Program

    script = tmp_path / "train.py"
    script.write_text(
        "import torch\n"
        "w = torch.zeros(4, requires_grad=True)\n"
        "for i in range(2600):\n"
        "    (w * float(i)).sum().backward()\n"
        "    w.grad = None\n"
    )
    session = Session(DiagnoseConfig(steps=0, warmup=2, max_kept_steps=100))
    end = run_program(session, Program(str(script)))
    assert end.status == "completed"
    assert len(session.tracker.steps) < 100 + 1000  # trimmed while it ran
    run = build_run(session, str(script), [], end.status, end.exit_code, end.error)
    assert [s.index for s in run.steps] == list(range(2500, 2600))
    assert "2598 steps were measured; the report keeps the last 100 (bounded memory)" in run.notes


def test_no_grad_forwards_feeding_the_training_step_are_not_evaluation(diagnose_here):
    """Distillation (a no-grad teacher on the student's batch) and a frozen backbone feeding a
    trained head run inside every training step: their time is the step's, not evaluation's.
    The validation forward at the end of each step still is evaluation."""
    run = diagnose_here(
        """
        teacher = nn.Sequential(nn.Linear(32, 512), nn.ReLU(), nn.Linear(512, 4)).eval()
        student = nn.Linear(32, 4)
        backbone = nn.Sequential(nn.Linear(32, 512), nn.ReLU()).requires_grad_(False)
        head = nn.Linear(512, 4)
        opt = torch.optim.SGD([*student.parameters(), *head.parameters()], lr=0.1)
        val = torch.randn(16, 32)
        for step in range(12):
            x = torch.randn(64, 32)
            with torch.no_grad():
                soft = teacher(x).softmax(1)
            loss = (student(x).log_softmax(1) * soft).sum(1).mean()
            loss = loss + head(backbone(x).flatten(1)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            with torch.no_grad():
                student(val)  # validation: evaluation
        """,
        steps=4,
        warmup=2,
    ).run
    evaluation = run.evaluation
    # one validation forward after each of the 5 optimizer steps before the stop at the 6th
    assert evaluation.forwards == 5 and evaluation.locations == [evaluation.locations[0]]
    assert evaluation.locations[0].endswith("train.py:24")
    assert all(s.batch_size == 64 and s.evaluation_s > 0 for s in run.steps)
    # teacher and backbone were not cut out: the only evaluation site is line 24 (above), and
    # their batch of 64 is the step's (not double-counted)


def test_validation_loader_waits_are_evaluation_not_training_data(diagnose_here):
    # periodic validation through its own loader (a worker started per epoch, slow items): its
    # first wait comes before the first evaluation forward, and must not become training data;
    # a wait is judged by the forward its batch feeds, not by the modes it was fetched under
    report = diagnose_here(
        """
        class Slow(Dataset):
            def __len__(self):
                return 2
            def __getitem__(self, i):
                time.sleep(0.03)
                return torch.randn(8), 0
        model = nn.Linear(8, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        train = DataLoader(TensorDataset(torch.randn(512, 8)), batch_size=16)
        val = DataLoader(Slow(), batch_size=1, num_workers=1)
        batches = iter(train)
        for i in range(len(train)):
            with torch.no_grad():  # fetched without autograd, yet a training batch
                (x,) = next(batches)
            model(x).pow(2).mean().backward()
            opt.step()
            opt.zero_grad()
            if i % 3 == 2:
                model.eval()
                with torch.inference_mode():
                    for xv, _ in val:
                        model(xv)
                model.train()
        """,
        steps=8,
        warmup=2,
    )
    run = report.run
    validated = [s for s in run.steps if s.evaluation_s > 0]
    assert len(validated) >= 2
    for step in validated:  # each validation waited >= 60 ms for its two slow items
        assert step.phases.get("data", 0.0) < 0.25 * step.evaluation_s, step
    # the training loader's waits stay training data, though fetched under no_grad
    assert all(step.phases.get("data", 0.0) > 0 for step in run.steps)
    assert [ld.role for ld in run.loaders if ld.num_workers == 1] == ["eval"]
    assert report.breakdown.get("data", 0.0) < 0.5


def test_probes_left_out_by_name_are_not_made_and_idle_probes_skip_step_ends():
    import torch

    from torchdoctor.diagnose.session import DiagnoseConfig, Session

    session = Session(DiagnoseConfig(without_probes=("SyncProbe", "LineSampler")))
    names = {type(probe).__name__ for probe in session.probes}
    assert "SyncProbe" not in names and "LineSampler" not in names
    assert {"ForwardProbe", "BackwardProbe", "OptimizerProbe"} <= names
    session.install()
    try:
        listening = {type(probe).__name__ for probe in session._step_listeners}
    finally:
        session.uninstall()
    # no --profile and no CUDA here: those two have nothing to do at a step's end
    assert "ProfilerProbe" not in listening
    assert "CudaPhaseProbe" not in listening or torch.cuda.is_available()
    assert {"MemoryTimelineProbe", "EnvironmentProbe"} <= listening
