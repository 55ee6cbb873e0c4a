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
    clock.advance(5)  # e.g. the validation loader, part of the evaluation span
    _forward(tracker, clock, 3, got_grad=False, grad=False)
    _forward(tracker, clock, 3, got_grad=False, grad=False)
    clock.advance(1)  # after the last evaluation forward: back in the training step
    record = tracker.end_step()
    assert record.eval_seconds == 11
    assert record.wall == 4
    assert record.phases == {"forward": 1, "backward": 2, "other": 1}
    assert record.batch_size == 4
    assert len(tracker.eval_forwards) == 2


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
    tracker.marker = seen.append
    tracker.push("forward")
    tracker.push("h2d")
    tracker.pop()
    tracker.pop()
    assert seen == ["forward", "h2d", "forward", "other"]
