"""The phase state machine with a hand-driven clock: phases partition the step, innermost wins,
evaluation spans are excluded."""

from torchdoctor.diagnose.steps import ForwardRecord, StepTracker


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def advance(self, seconds):
        self.now += seconds


def _forward(tracker, clock, seconds, got_grad, grad=True):
    tracker.push("forward")
    record = ForwardRecord(clock.now, grad, False, True, "t.py:1", batch_size=4)
    tracker.forward_started(record)
    clock.advance(seconds)
    record.t1 = clock.now
    record.got_grad = got_grad
    tracker.pop()


def test_phases_partition_the_step_and_innermost_wins():
    clock = Clock()
    tracker = StepTracker(clock)
    tracker.push("data")
    clock.advance(3)
    tracker.pop()
    clock.advance(1)  # other
    tracker.push("forward")
    clock.advance(2)
    tracker.push("h2d")  # a copy inside the forward: innermost wins
    clock.advance(0.5)
    tracker.pop()
    clock.advance(0.5)
    tracker.pop()
    tracker.push("backward")
    clock.advance(4)
    tracker.pop()
    record = tracker.end_step()
    assert record.phases == {"data": 3, "other": 1, "forward": 2.5, "h2d": 0.5, "backward": 4}
    assert record.wall == 11
    assert tracker.index == 1


def test_evaluation_span_is_excluded_from_the_step():
    clock = Clock()
    tracker = StepTracker(clock)
    _forward(tracker, clock, 1, got_grad=True)
    tracker.push("backward")
    clock.advance(2)
    tracker.pop()
    tracker.backward_finished(None)
    clock.advance(5)  # e.g. a checkpoint: stays in the step (the span starts at the forward)
    _forward(tracker, clock, 3, got_grad=False, grad=False)
    clock.advance(0.5)  # the next validation batch, between two evaluation forwards: cut out
    _forward(tracker, clock, 3, got_grad=False, grad=False)
    clock.advance(1)  # after the last evaluation forward: back in the training step
    record = tracker.end_step()
    assert record.eval_seconds == 6.5
    assert record.wall == 9
    assert record.phases == {"forward": 1, "backward": 2, "other": 6}
    assert record.batch_size == 4
    assert len(tracker.eval_forwards) == 2


def _awaiting_forward(tracker, clock, seconds, batch=4):
    """A forward with autograd on whose output has a grad_fn: its gradient may come later."""
    tracker.push("forward")
    record = ForwardRecord(clock.now, True, False, True, "t.py:1", batch_size=batch)
    record.awaits_grad = True
    tracker.forward_started(record)
    clock.advance(seconds)
    record.t1 = clock.now
    tracker.pop()
    return record


def _backward(tracker, clock, seconds):
    tracker.push("backward")
    clock.advance(seconds)
    tracker.pop()
    tracker.backward_finished(None)


def test_gradient_arriving_after_the_step_closed_is_training_not_evaluation():
    """A GAN: G's output gets its gradient in the step after the one G ran in (D's step)."""
    clock = Clock()
    tracker = StepTracker(clock)
    generator = _awaiting_forward(tracker, clock, 1)
    _forward(tracker, clock, 1, got_grad=True)  # D(real)
    _forward(tracker, clock, 1, got_grad=True)  # D(fake.detach())
    _backward(tracker, clock, 2)
    d_step = tracker.end_step()  # optD.step(): G's output has no gradient yet
    assert tracker.unsettled is d_step
    _forward(tracker, clock, 1, got_grad=True)  # D(fake)
    _backward(tracker, clock, 2)
    generator.got_grad = True  # lossG.backward() reached G's output
    g_step = tracker.end_step()
    assert tracker.unsettled is None
    assert tracker.eval_forwards == [] and tracker.eval_seconds == 0
    assert d_step.wall == 5 and d_step.eval_seconds == 0
    assert generator in d_step.training_forwards
    assert d_step.batch_size == 4  # G, D(real), D(fake) feed one backward: 4 samples, not 12
    assert g_step.batch_size == 4


def test_forward_with_autograd_that_never_gets_a_gradient_is_evaluation_one_step_later():
    clock = Clock()
    tracker = StepTracker(clock)
    _forward(tracker, clock, 1, got_grad=True)
    _backward(tracker, clock, 1)
    clock.advance(2)  # e.g. a checkpoint: stays in the step
    _awaiting_forward(tracker, clock, 3)  # validation without no_grad
    first = tracker.end_step()
    assert first.wall == 7 and first.eval_seconds == 0  # undecided yet
    _forward(tracker, clock, 1, got_grad=True)
    _backward(tracker, clock, 1)
    second = tracker.end_step()
    assert first.eval_seconds == 3 and first.wall == 4  # settled: cut out afterwards
    assert first.phases == {"forward": 1, "backward": 1, "other": 2}
    assert second.wall == 2
    assert tracker.eval_seconds == 3 and len(tracker.eval_forwards) == 1
    _awaiting_forward(tracker, clock, 2)  # the run ends: no gradient came
    tracker.close()
    assert tracker.eval_seconds == 5 and len(tracker.eval_forwards) == 2


def test_accumulated_micro_batches_sum_their_sizes():
    clock = Clock()
    tracker = StepTracker(clock)
    for size in (4, 4, 2):
        record = _awaiting_forward(tracker, clock, 1, batch=size)
        record.got_grad = True
        _backward(tracker, clock, 1)
    step = tracker.end_step()
    assert step.batch_size == 10 and step.micro_batches == 3


def test_unfinished_step_forwards_become_evaluation_on_close():
    clock = Clock()
    tracker = StepTracker(clock)
    _forward(tracker, clock, 2, got_grad=False, grad=False)
    tracker.close()
    assert tracker.steps == []
    assert tracker.eval_seconds == 2 and len(tracker.eval_forwards) == 1


class FakeEvent:
    """Stands in for torch.cuda.Event: recorded at a device time in milliseconds."""

    def __init__(self, at_ms):
        self.at_ms = at_ms

    def elapsed_time(self, end):
        return end.at_ms - self.at_ms


def test_cuda_phase_times_from_transition_events():
    from torchdoctor.diagnose.probes.cuda_timing import phase_times

    marks = [("other", 0), ("data", 1), ("other", 3), ("forward", 4), ("backward", 10),
             ("forward", 20), ("other", 21)]  # fmt: skip
    times = phase_times([(phase, FakeEvent(ms)) for phase, ms in marks])
    assert times == {"other": 0.002, "data": 0.002, "forward": 0.007, "backward": 0.010}


def test_marker_sees_the_phase_that_starts_at_each_transition():
    tracker = StepTracker(Clock())
    seen = []
    tracker.phase_listeners.append(seen.append)
    tracker.push("forward")
    tracker.push("h2d")
    tracker.pop()
    tracker.pop()
    assert seen == ["forward", "h2d", "forward", "other"]


def _data_wait(tracker, clock, seconds):
    tracker.push("data")
    started = clock.now
    clock.advance(seconds)
    tracker.pop()
    tracker.data_wait(started, clock.now, False)


def test_a_batch_read_by_a_no_grad_forward_and_then_trained_on_is_training_data():
    # DQN: the replay batch feeds the target network under no_grad, then the online network
    clock = Clock()
    tracker = StepTracker(clock)
    _data_wait(tracker, clock, 3)
    _forward(tracker, clock, 1, got_grad=False, grad=False)  # target network
    _forward(tracker, clock, 1, got_grad=True)
    _backward(tracker, clock, 2)
    record = tracker.end_step()
    assert record.phases["data"] == 3, record.phases
    # a validation batch, read by evaluation forwards only, is cut out with them
    _forward(tracker, clock, 1, got_grad=True)
    _backward(tracker, clock, 2)
    _data_wait(tracker, clock, 3)
    _forward(tracker, clock, 1, got_grad=False, grad=False)
    record = tracker.end_step()
    assert "data" not in record.phases and record.eval_seconds == 4, record


def test_a_steps_phases_are_summed_when_read_or_at_the_runs_end_not_at_its_close(monkeypatch):
    """Summing a step's intervals per phase was ~220 bytecode instructions of each step's close
    that nothing of diagnose read while the program ran: the sum waits for a reader (a --try
    recorder at the step's end, the rules after the run), and close() sums what is left before it
    turns the pieces into spans. The answers are the same."""
    import torchdoctor.diagnose.steps as steps

    sums = []
    summed = steps._phase_seconds
    monkeypatch.setattr(steps, "_phase_seconds", lambda pieces: sums.append(1) or summed(pieces))
    clock = Clock()
    tracker = StepTracker(clock)
    for _ in range(3):
        tracker.push("data")
        clock.advance(1)
        tracker.pop()
        _forward(tracker, clock, 2, got_grad=True)
        clock.advance(0.5)
        tracker.end_step()
    assert sums == []  # three steps closed: none summed
    first, second, third = tracker.steps
    assert first.wall == 3.5 and first.phases == {"data": 1, "forward": 2, "other": 0.5}
    assert first.phases is first.phases and len(sums) == 1  # summed once, when read
    tracker.close()
    assert len(sums) == 3 and all(step.pieces is None for step in tracker.steps)
    assert third.phases == second.phases == {"data": 1, "forward": 2, "other": 0.5}


def _frozen_forward(tracker, clock, module_id, location="t.py:2"):
    """A no_grad forward of a frozen module (an encoder whose output feeds the trained model)."""
    tracker.push("forward")
    record = ForwardRecord(clock.now, False, False, True, location, batch_size=4)
    record.module_id = module_id
    tracker.forward_started(record)
    clock.advance(1)
    record.t1 = clock.now
    tracker.pop()
    return record


def test_a_stop_between_a_frozen_encoders_forwards_does_not_make_them_evaluation():
    """World Models' MDN-RNN encodes `obs` and `next_obs` with its frozen VAE under no_grad,
    then trains; a budget stop at the second encoding left the first "1 of 1 evaluation
    forward(s)" (D303). The call that fed training in the steps before is left out where it
    ends the step we cut short; before another module's evaluation forward (the MDN-RNN's test
    pass under no_grad) it is evaluation's work, as that forward is."""
    clock = Clock()
    tracker = StepTracker(clock)
    for _ in range(2):
        _frozen_forward(tracker, clock, module_id=1)  # vae(obs)
        _frozen_forward(tracker, clock, module_id=1)  # vae(next_obs)
        trained = _awaiting_forward(tracker, clock, 1)  # the MDN-RNN
        trained.module_id, trained.got_grad = 2, True
        _backward(tracker, clock, 1)
        tracker.end_step()
    assert tracker.eval_forwards == []
    encoded = _frozen_forward(tracker, clock, module_id=1)  # the test pass: vae(obs), ...
    evaluation = _frozen_forward(tracker, clock, module_id=3, location="t.py:9")  # ... mdrnn
    _frozen_forward(tracker, clock, module_id=1)  # vae(obs), then the budget stops the program
    tracker.close(cut_short=True)
    assert tracker.eval_forwards == [encoded, evaluation] and tracker.eval_seconds == 2
