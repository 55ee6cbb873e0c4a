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
