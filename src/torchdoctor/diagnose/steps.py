"""The phase state machine: turns the probes' enter/exit events into training steps.

Probes call `push(phase)` / `pop()` around the code they time (the DataLoader's next(), a host to
device copy, the root model's forward, backward(), the optimizer); time outside every probe is
"other". The innermost phase wins, so the timeline is a list of contiguous intervals that always
sums to the wall time. A step ends where the session says (an optimizer step, or backward() when
the run has no optimizer).

Evaluation is cut out of the step it happened in: a root forward whose output never received a
gradient is an evaluation forward, and the span from the last training event before it (the step
start, a training forward, a backward) to its end is excluded from the step's wall and phases and
booked as evaluation time instead.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable

OTHER = "other"


@dataclass
class ForwardRecord:
    t0: float
    grad_enabled: bool
    inference_mode: bool
    train_mode: bool
    location: str
    t1: float | None = None
    batch_size: int | None = None
    shape: tuple | None = None  # shape of the first input tensor
    device_type: str = "cpu"  # of the first input tensor
    autocast: str | None = None  # autocast dtype when the forward ran under autocast
    got_grad: bool = False  # a gradient flowed into its output: a training forward


@dataclass
class StepRecord:
    index: int
    start: float
    end: float
    wall: float
    phases: dict[str, float]
    batch_size: int | None
    micro_batches: int
    counters: dict[str, float]
    loss: Any = None  # the detached loss tensor, read after the run (no sync during it)
    eval_seconds: float = 0.0
    training_forwards: list[ForwardRecord] = field(default_factory=list)


@dataclass
class _StepState:
    start: float
    intervals: list = field(default_factory=list)  # (phase, t0, t1), contiguous
    forwards: list[ForwardRecord] = field(default_factory=list)
    backward_ends: list[float] = field(default_factory=list)
    counters: dict = field(default_factory=lambda: defaultdict(float))
    loss: Any = None


class StepTracker:
    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self.clock = clock
        self.origin = clock()
        self.stack: list[str] = []
        self.steps: list[StepRecord] = []
        self.eval_forwards: list[ForwardRecord] = []
        self.eval_seconds = 0.0
        self.backwards = 0
        self.on_step_end: list[Callable[[StepRecord], None]] = []
        # optional: called with the phase that starts at each transition (CUDA event timing)
        self.marker: Callable[[str], None] | None = None
        self._t_last = self.origin
        self._state = _StepState(self.origin)

    # -- events from the probes ---------------------------------------------------------------
    @property
    def index(self) -> int:
        """Index of the step in progress."""
        return len(self.steps)

    @property
    def counters(self) -> dict:
        return self._state.counters

    def push(self, phase: str) -> None:
        self._close(self.clock())
        self.stack.append(phase)
        if self.marker is not None:
            self.marker(phase)

    def pop(self) -> None:
        self._close(self.clock())
        if self.stack:
            self.stack.pop()
        if self.marker is not None:
            self.marker(self.stack[-1] if self.stack else OTHER)

    def forward_started(self, record: ForwardRecord) -> None:
        self._state.forwards.append(record)

    def backward_finished(self, loss: Any) -> None:
        self.backwards += 1
        self._state.backward_ends.append(self.clock())
        self._state.loss = loss

    def end_step(self) -> StepRecord:
        now = self.clock()
        self._close(now)
        state = self._state
        record = self._build(state, now)
        self.steps.append(record)
        self._state = _StepState(now)
        for listener in list(self.on_step_end):
            listener(record)
        return record

    def close(self) -> None:
        """The run is over: forwards of the unfinished step that got no gradient were evaluation."""
        now = self.clock()
        self._close(now)
        for span_start, span_end, forwards in self._eval_groups(self._state):
            self.eval_seconds += span_end - span_start
            self.eval_forwards.extend(forwards)
        self._state = _StepState(now)

    # -- internals ----------------------------------------------------------------------------
    def _close(self, now: float) -> None:
        if now > self._t_last:
            phase = self.stack[-1] if self.stack else OTHER
            self._state.intervals.append((phase, self._t_last, now))
        self._t_last = now

    def _eval_groups(self, state: _StepState):
        """(start, end, forwards) for each run of consecutive evaluation forwards in the step."""
        if all(f.got_grad for f in state.forwards):
            return
        anchors = [state.start, *state.backward_ends]
        anchors += [f.t1 for f in state.forwards if f.got_grad and f.t1 is not None]
        anchors.sort()
        groups: list[list[ForwardRecord]] = []
        previous_was_eval = False
        for forward in state.forwards:
            is_eval = not forward.got_grad and forward.t1 is not None
            if is_eval and previous_was_eval:
                groups[-1].append(forward)
            elif is_eval:
                groups.append([forward])
            previous_was_eval = is_eval
        for group in groups:
            start = max(a for a in anchors if a <= group[0].t0)
            yield start, group[-1].t1, group

    def _build(self, state: _StepState, now: float) -> StepRecord:
        spans = []
        eval_seconds = 0.0
        for span_start, span_end, forwards in self._eval_groups(state):
            spans.append((span_start, span_end))
            eval_seconds += span_end - span_start
            self.eval_forwards.extend(forwards)
        self.eval_seconds += eval_seconds
        phases: dict[str, float] = defaultdict(float)
        for phase, t0, t1 in state.intervals:
            kept = t1 - t0
            if spans:
                kept -= sum(max(0.0, min(t1, b) - max(t0, a)) for a, b in spans)
            if kept > 0:
                phases[phase] += kept
        training = [f for f in state.forwards if f.got_grad]
        sizes = [f.batch_size for f in training]
        batch = sum(sizes) if sizes and None not in sizes else None
        return StepRecord(
            index=len(self.steps),
            start=state.start - self.origin,
            end=now - self.origin,
            wall=sum(phases.values()),
            phases=dict(phases),
            batch_size=batch,
            micro_batches=max(1, len(state.backward_ends)),
            counters=dict(state.counters),
            loss=state.loss,
            eval_seconds=eval_seconds,
            training_forwards=training,
        )
