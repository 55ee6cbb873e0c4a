"""The phase state machine: turns the probes' enter/exit events into training steps.

Probes call `push(phase)` / `pop()` around the code they time (the DataLoader's next(), a host to
device copy, the root model's forward, backward(), the optimizer); time outside every probe is
"other". The innermost phase wins, so the timeline is a list of contiguous intervals that always
sums to the wall time. A step ends where the session says (an optimizer step, or backward() when
the run has no optimizer).

Evaluation is cut out of the step it happened in: a root forward whose output never received a
gradient is an evaluation forward, and the span from its own start to its end (from the first to
the last forward of a run of consecutive evaluation forwards) is excluded from the step's wall
and phases and booked as evaluation time instead.

When is "never" decided? A forward run without autograd (no_grad, inference_mode, or an output
without grad_fn) is evaluation at once, when its step closes. A forward whose output could still
get a gradient may belong to a later step's backward (a GAN: G's output gets its gradient after
the discriminator's optimizer step closed the step G ran in), so its step stays *unsettled* and
is decided when the next step closes (or when the run ends): by then a training forward has got
its gradient, and one that still has none was evaluation with autograd on. Settling edits the
earlier StepRecord in place (listeners of `on_step_end` saw it before).
"""

from __future__ import annotations

import bisect
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from operator import itemgetter, sub
from typing import Any

from torchdoctor.diagnose.step_samples import batch_size, per_update

OTHER = "other"
TRIM_BATCH = 1000  # steps dropped at once beyond the cap (amortised list trimming)
# The thread's CPU time (StepRecord.cpu_share) is read around each of the first CPU_SHARE_EVERY
# steps (a short run gets a reading per step), then around one step in CPU_SHARE_EVERY. Reading
# it is a syscall, and Linux takes the CPU from a thread that has used its share of a busy core
# mostly where it enters the kernel. Read at every step close, the whole wait for a CPU landed
# there: beside two busy loops on its core, closing a step took 13 ms of a 42 ms step for 0.2 ms
# of CPU, booked to "other" by this tracker and to torchdoctor by the line sampler, and a Python
# loop holding 19% of the step at idle got 1-5% of the samples (bench/sampler_contention.py).
CPU_SHARE_EVERY = 8


# A record's field set after the record is made: its default is a class attribute, not assigned
# by the generated __init__ (a ForwardRecord is made at every root forward, a StepRecord at
# every step close)
def _later(default: Any = None, **kwargs: Any) -> Any:
    return field(default=default, init=False, **kwargs)


@dataclass
class ForwardRecord:
    t0: float
    grad_enabled: bool
    inference_mode: bool
    train_mode: bool
    location: str
    batch_size: int | None = None
    module_id: int | None = None  # id() of the root module called
    t1: float | None = _later()
    shape: tuple | None = _later()  # shape of the first input tensor
    device_type: str = _later("cpu")  # of the first input tensor
    autocast: str | None = _later()  # autocast dtype when the forward ran under autocast
    on_training_batch: bool = _later(False)  # its input was the input of a recent grad forward
    got_grad: bool = _later(False)  # a gradient flowed into its output: a training forward
    mode_sensitive: bool = _later(False)  # autograd on, and Dropout/BatchNorm (rule D305)
    # called by torch.optim.swa_utils.update_bn, or run while a BatchNorm layer of the model keeps
    # a cumulative average (momentum=None, as update_bn sets): train mode on purpose (BatchNorm
    # statistics recomputed for averaged weights), not an evaluation left in train mode (D302)
    refreshes_batchnorm: bool = _later(False)
    awaits_grad: bool = _later(False)  # its output has a grad_fn: a gradient may come later
    # its output was the first input of another model's forward (a GAN's generator feeding its
    # discriminator, a backbone feeding a head called on its own): rule D302 asks
    feeds_model: bool = _later(False)
    # its first input was another model's output (a decoder fed by an encoder): a decoder's
    # forward fed by no model samples it from noise, which rule D302 does not judge
    fed_by_model: bool = _later(False)
    # minor page faults of the thread during the forward, read where it may be evaluation (eval
    # mode or autograd off; None: not read): the evaluation what-if starts its copy's forwards
    # from the allocator state these show
    page_faults: int | None = _later()
    # forwards of the same step that shared data with this one (same input, or one's output is
    # the other's input): a teacher beside its student, a frozen backbone feeding a trained head.
    # A tuple, made when a link is: most forwards have none, and a list each was one more object
    # a forward left for the garbage collector
    linked: tuple = _later((), repr=False, compare=False)
    input_ref: Any = _later(repr=False, compare=False)  # weak references: links
    # the first input's version counter when the forward started (None: not readable, an
    # inference tensor): the very tensor with a new version holds new data (a batch copied
    # into one fixed input buffer), not the same full batch again
    input_version: int | None = _later()
    output_ref: Any = _later(repr=False, compare=False)
    # a run of identical forwards is one record (forward.py: the same module, call site, grad,
    # train and inference mode, input shape and autocast as the step's forward before, no
    # backward, update or data wait between): `count` forwards, `seconds` their summed time;
    # t0 is the first one's start, t1 the last one's end
    count: int = _later(1)
    seconds: float = _later(0.0)

    def feeds_training(self) -> bool:
        return any(other.got_grad for other in self.linked)

    def settled_as_evaluation(self, final: bool) -> bool:
        """Evaluation for sure: no gradient and (final, or none could ever come), and no data
        shared with a training forward of its step (then it is part of training)."""
        if self.t1 is None or self.got_grad or not (final or not self.awaits_grad):
            return False
        return not self.feeds_training()


def _link_inside_one_graph(state: _StepState) -> None:
    """A forward with autograd on, in train mode, that got no gradient but ran between two
    forwards that did, with no backward between those two, was part of building one loss: an
    adaptive ODE solver's rejected trial steps and step-size probes (torchdiffeq's dopri5), an RNN
    cell's per-timestep output that only the last timestep uses (its Linear layers are the root
    modules when the program calls `cell.forward` itself). Training work, not evaluation: it is
    linked to the training forward after it (`feeds_training`). One pass over the step's forwards.
    """
    last_trained: ForwardRecord | None = None
    pending: list[ForwardRecord] = []
    for forward in state.forwards:
        if forward.got_grad:
            if last_trained is not None and pending:
                if not any(last_trained.t0 < end < forward.t0 for end in state.backward_ends):
                    for discarded in pending:
                        discarded.linked += (forward,)
            pending = []
            last_trained = forward
        elif forward.grad_enabled and forward.train_mode and last_trained is not None:
            pending.append(forward)


def counted_median(counted) -> Any:
    """The median of (value, count) pairs, each value counted `count` times (a record of a run
    of identical forwards stands for `count` of them); None when there are none."""
    pairs = sorted(counted)
    middle = sum(count for _, count in pairs) // 2
    for value, count in pairs:
        if middle < count:
            return value
        middle -= count
    return None


def _always(module_id: int | None) -> bool:
    return True


def only_itself(module_id: int | None) -> set[int]:
    """A module's ids when its submodules are not known: only its own."""
    return {module_id} if module_id is not None else set()


def _mark_run_again_in_backward(
    state: _StepState, submodule_ids: Callable[[int | None], set[int]]
) -> None:
    """Forwards of a module that the step's backward ran again (it, or one of its submodules),
    when none of its forwards got a gradient: an autograd.Function ran them under no_grad in its
    forward, and its backward runs the module again to take its parameters' gradients itself
    (torchdiffeq's adjoint method; its forward calls the user's module through a wrapper module
    made anew in each call). Decided by autograd (the backward reached the module), not by the
    forwards' outputs: they are the step's training forwards. A module that also had a forward
    with a gradient (its activations recomputed by checkpointing) keeps its no-gradient forwards
    as they were."""
    trained = {f.module_id for f in state.forwards if f.got_grad}
    reached: dict[int | None, bool] = {}
    for forward in state.forwards:
        module = forward.module_id
        if forward.got_grad or module in trained:
            continue
        if module not in reached:
            reached[module] = not state.called_in_backward.isdisjoint(submodule_ids(module))
        if reached[module]:
            forward.got_grad = True


def _link_beside_training(state: _StepState, trains: Callable[[int | None], bool]) -> None:
    """A forward whose output cannot get a gradient (no_grad, or frozen weights), of a module
    that does not train in this step, at a training forward's batch size (or a multiple), that
    ends before one of the step's backwards with no DataLoader wait between: a frozen teacher's
    soft targets, a target network's or an EMA model's values, which that backward's loss uses.
    Part of the step's forward work, not evaluation (its output has no grad_fn to tell it by:
    this is its place in the step; a step can hold several updates, TD3's critic and actor). A
    validation pass at the step's start reads its own batches (a loader wait between) or runs
    more forwards of the model than the step trains (more than two: a batch's inputs and
    targets).

    A module whose forward got a gradient trains in the step, unless its parameters take no
    gradient (`trains`, asked only here): the gradient only flowed through it (a perceptual
    loss's frozen VGG, called on the trained network's output and, beside it, with or without
    autograd, on the batch for the loss's target). A forward with autograd on whose output has
    no grad_fn ran on frozen weights without asking."""
    training = [f for f in state.forwards if f.got_grad]
    backwards = [t0 for phase, t0, _ in state.intervals if phase == "backward"]
    if not training or not backwards:
        return
    trained = {f.module_id for f in training}
    batches = {f.batch_size for f in training}
    waits = [t0 for t0, _, _ in state.data_waits]
    candidates = []
    for f in state.forwards:
        if f.got_grad or f.awaits_grad or f.t1 is None:
            continue
        if f.module_id in trained and not f.grad_enabled and trains(f.module_id):
            continue
        backward = next((t0 for t0 in backwards if t0 >= f.t1), None)
        if (
            backward is not None
            and _of_a_training_batch(f.batch_size, batches)
            and not any(f.t1 <= t0 < backward for t0 in waits)
        ):
            candidates.append(f)
    per_module: dict[int | None, int] = defaultdict(int)
    for f in candidates:
        per_module[f.module_id] += f.count
    # two: a batch's inputs and its targets through the same frozen model (World Models'
    # `vae(obs)` and `vae(next_obs)` for an MDN-RNN's one forward; BYOL's two views)
    most = max(sum(f.count for f in training), 2)
    for f in candidates:
        if per_module[f.module_id] <= most and not f.feeds_training():
            f.linked += (training[0],)


def _of_a_training_batch(rows: int | None, batches: set) -> bool:
    """A training forward's batch size, or a multiple of one: a per-frame encoder runs on the
    frames of a batch of sequences, flattened (World Models' VAE on 16 x 32 frames beside its
    MDN-RNN's 32-step sequences)."""
    if rows in batches:
        return True
    return bool(rows) and any(b and b > 1 and rows % b == 0 for b in batches)


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
    loss: Any = _later()  # a CPU loss as a float; else the detached tensor, read after the run
    eval_seconds: float = _later(0.0)
    cpu_share: float | None = _later()  # the thread's CPU time / the step's elapsed time (<= 1)
    compiles: int = _later(0)  # frames torch.compile compiled in the step (the sampling probe)
    training_forwards: list[ForwardRecord] = field(default_factory=list)
    eval_forwards: list[ForwardRecord] = field(default_factory=list)
    # clock times from each evaluation run's first forward to the next forward after it (or the
    # step end): host reads there belong to evaluation (a validation metric's .item())
    eval_windows: list[tuple[float, float]] = field(default_factory=list)
    # clock times of the evaluation spans cut out of the step (what `eval_seconds` sums): the op
    # counter books the ops dispatched there to evaluation (RL acting forwards of one observation)
    eval_spans: list[tuple[float, float]] = field(default_factory=list)
    # (phase, start, end) since the origin, evaluation cut out, same-phase neighbours merged:
    # where each phase really ran (the --trace places them there); at most MAX_SPANS. Made after
    # the run (StepTracker.close()) from `pieces`: nothing reads them while it runs
    spans: list[tuple[str, float, float]] = field(default_factory=list)
    # (phase, t0, t1) in clock time, evaluation cut out: what `phases` sums, until close()
    pieces: list[tuple[str, float, float]] | None = _later()
    # `phases` itself (None: not summed yet; see _phases_of)
    _phases: dict[str, float] | None = _later(repr=False, compare=False)


def _phases_of(record: StepRecord) -> dict[str, float]:
    """Seconds per phase of the step, summed from its pieces when first read. The tracker
    leaves them unsummed at the step's close: nothing of diagnose reads a step's phases while the
    program runs (the rules read them after it; StepTracker.close() sums the rest before it drops
    the pieces), and summing a step's intervals was ~220 of the ~3,600 bytecode instructions the
    probes add to a step (round 16). A listener that reads them at the step's end (--try's
    recorder) sums them then."""
    phases = record._phases
    if phases is None:
        phases = record._phases = _phase_seconds(record.pieces or ())
    return phases


def _set_phases(record: StepRecord, phases: dict[str, float] | None) -> None:
    record._phases = phases


# a property over the dataclass's field: StepRecord(..., phases, ...) still takes a dict
StepRecord.phases = property(_phases_of, _set_phases)  # type: ignore[assignment]
_START, _END = itemgetter(1), itemgetter(2)


class _StepState:
    """What the step in progress collects. A plain class: one is made at every step close, and
    a dataclass's generated __init__ (a default factory per list) ran 95 bytecode instructions
    of the per-step cost where this runs 35."""

    __slots__ = (
        "start",
        "cpu_start",
        "intervals",
        "forwards",
        "backward_ends",
        "update_ends",
        "data_waits",
        "counters",
        "loss",
        "called_in_backward",
    )

    def __init__(self, start: float, cpu_start: float | None = None) -> None:
        self.start = start
        self.cpu_start = cpu_start  # this thread's CPU time, on the steps that read it
        self.intervals: list = []  # (phase, t0, t1), contiguous
        self.forwards: list[ForwardRecord] = []
        self.backward_ends: list[float] = []
        self.update_ends: list[float] = []  # optimizer steps (several: a GAN)
        # DataLoader waits (t0, t1, ends_epoch): evaluation when they feed an evaluation forward
        self.data_waits: list = []
        self.counters: defaultdict[str, float] = defaultdict(float)
        self.loss: Any = None
        self.called_in_backward: set[int] = set()  # module ids (forward probe)


class StepTracker:
    def __init__(
        self, clock: Callable[[], float] = time.perf_counter, max_kept: int | None = None
    ) -> None:
        self.clock = clock
        self.origin = clock()
        # the phases entered, innermost last; never rebound: probes hold the list itself (the op
        # counters, the sync probe's wrappers)
        self.stack: list[str] = []
        self.steps: list[StepRecord] = []  # the latest ones: at most max_kept + TRIM_BATCH
        self.max_kept = max_kept  # None: keep every step
        self.dropped = 0  # oldest steps forgotten to bound memory (long runs with --steps 0)
        # index of the step in progress (dropped + len(steps)): an attribute, not a property,
        # because the probes ask for it several times a step
        self.index = 0
        self.eval_forwards: list[ForwardRecord] = []
        self.eval_seconds = 0.0
        # training seconds of every step closed so far, warm-up included (the steps kept are
        # bounded): what evaluation seen outside the measured steps compares with
        self.train_seconds = 0.0
        self.tail_eval_windows: list[tuple[float, float]] = []  # after the last step (close())
        self.backwards = 0
        self.forwards_seen = 0  # root model forwards, training and evaluation
        # (module id, call site) of no-gradient forwards that fed a closed step's training (a
        # frozen encoder's, a teacher's): the same call in a step we cut short is training too
        self._beside_training: set[tuple[int | None, str]] = set()
        # backwards, optimizer updates and data waits so far: a run of identical forwards (one
        # record) never spans one of them (micro-batches, per-sample updates stay apart)
        self.boundaries = 0
        self.on_step_end: list[Callable[[StepRecord], None]] = []
        # called with the phase that starts at each transition (CUDA event timing, per-phase
        # memory, the line sampler); probes add and remove themselves, so keep it cheap when empty
        self.phase_listeners: list[Callable[[str], None]] = []
        self.closing = False  # inside end_step(): closing a step is our time, not the program's
        self._t_last = self.origin
        # ids of modules called inside a backward() during the step in progress (the forward
        # probe adds them; moved to the step's state at its close)
        self.called_in_backward: set[int] = set()
        # ids of a root module and its submodules, by the root's id (the forward probe knows the
        # modules; by default a module is only itself)
        self.submodule_ids: Callable[[int | None], set[int]] = only_itself
        # whether a root module has parameters that take gradients (the forward probe knows the
        # modules; by default every module trains)
        self.trains: Callable[[int | None], bool] = _always
        # told of the program's frame that called a torch function outside every phase in the
        # op-counting step (the forward probe's model methods: a model's functional forward)
        self.torch_call_outside: Callable[[Any], None] | None = None
        # the step in progress's counters and root forwards so far (its state's): attributes,
        # not properties, rebound with each new state (_begin), because the probes read them at
        # every timed call (an RL loop's host read per action; dozens of forwards a step, each
        # linked with the earlier ones)
        self.counters: defaultdict[str, float]
        self.step_forwards: list[ForwardRecord]
        self._begin(_StepState(self.origin))
        self._unsettled: tuple[StepRecord, _StepState] | None = None

    # -- events from the probes ---------------------------------------------------------------
    # push() and pop() run several times a step: _close() is spelled out in both
    def push(self, phase: str) -> None:
        now = self.clock()
        stack = self.stack
        if now > self._t_last:
            self._state.intervals.append((stack[-1] if stack else OTHER, self._t_last, now))
        self._t_last = now
        stack.append(phase)
        for listener in self.phase_listeners:
            listener(phase)

    def pop(self) -> None:
        now = self.clock()
        stack = self.stack
        if now > self._t_last:
            self._state.intervals.append((stack[-1] if stack else OTHER, self._t_last, now))
        self._t_last = now
        if stack:
            stack.pop()
        if self.phase_listeners:
            current = self.stack[-1] if self.stack else OTHER
            for listener in self.phase_listeners:
                listener(current)

    def remove_phase_listener(self, listener: Callable[[str], None]) -> None:
        """Safe from inside a listener: the transition in progress iterates the old list."""
        self.phase_listeners = [other for other in self.phase_listeners if other != listener]

    def forward_started(self, record: ForwardRecord) -> None:
        self.forwards_seen += 1
        self._state.forwards.append(record)

    def backward_finished(self, loss: Any) -> None:
        self.boundaries += 1
        self.backwards += 1
        self._state.backward_ends.append(self.clock())
        self._state.loss = loss

    def data_wait(self, t0: float, t1: float, ends_epoch: bool) -> None:
        """A DataLoader wait (`__iter__`, with its workers' start-up, or `next()`). It is judged
        with the forwards at the step's close: a wait whose batch feeds an evaluation forward (the
        next forward after it; for the wait that ended an epoch, the forward before it) is
        evaluation, cut out of the step: a validation loader's worker start-up is not training
        data time."""
        self.boundaries += 1
        self._state.data_waits.append((t0, t1, ends_epoch))

    def parameters_updated(self) -> None:
        self.boundaries += 1
        self._state.update_ends.append(self.clock())

    def end_step(self) -> StepRecord:
        self.closing = True  # the line sampler books this time to torchdoctor (lines.py)
        try:
            # the next step's CPU reading is taken before this step's end and this step's after
            # it: a wait for a CPU that these syscalls let in lands beside the step they measure
            following = self.index + 1
            reads_next = following < CPU_SHARE_EVERY or following % CPU_SHARE_EVERY == 0
            cpu_next = time.thread_time() if reads_next else None
            now = self.clock()
            cpu_now = None if self._state.cpu_start is None else time.thread_time()
            if now > self._t_last:  # _close(now), spelled out: this runs at every step
                self._state.intervals.append(
                    (self.stack[-1] if self.stack else OTHER, self._t_last, now)
                )
            self._t_last = now
            if self._unsettled is not None:
                self._settle()
            state = self._state
            if self.called_in_backward:
                state.called_in_backward, self.called_in_backward = self.called_in_backward, set()
            record = StepRecord(self.index, state.start - self.origin, now - self.origin,
                                0.0, {}, None, 1, {})  # fmt: skip
            self._fill(record, state, final=False)
            elapsed = now - state.start
            if elapsed > 0 and cpu_now is not None and state.cpu_start is not None:
                # < 1: the thread waited (other jobs had the CPU, I/O, the GPU)
                record.cpu_share = min(1.0, (cpu_now - state.cpu_start) / elapsed)
            self.steps.append(record)
            self.index += 1
            if self.max_kept is not None and len(self.steps) >= self.max_kept + TRIM_BATCH:
                del self.steps[:TRIM_BATCH]
                self.dropped += TRIM_BATCH
            for forward in state.forwards:  # a loop, not any(): this runs at every step
                if not forward.got_grad and forward.awaits_grad and forward.t1 is not None:
                    self._unsettled = (record, state)
                    break
            self._begin(_StepState(now, cpu_start=cpu_next))
            for listener in list(self.on_step_end):
                listener(record)
            # a step of one forward (the usual one) keeps that forward's references: its first
            if len(state.forwards) > 1 and (
                self._unsettled is None or self._unsettled[0] is not record
            ):
                _drop_references(record, state)
            return record
        finally:
            self.closing = False

    def evaluation_windows(self) -> list[tuple[float, float]]:
        """Every evaluation window so far (of the steps still kept), in clock time."""
        return [w for r in self.steps for w in r.eval_windows] + self.tail_eval_windows

    def forget_steps(self) -> None:
        self.steps.clear()
        self.train_seconds = 0.0
        self.dropped = 0
        self.index = 0

    @property
    def unsettled(self) -> StepRecord | None:
        """The last step, while some of its forwards may still get a gradient."""
        return self._unsettled[0] if self._unsettled else None

    def close(self, cut_short: bool = False) -> None:
        """The run is over: forwards that got no gradient were evaluation; the kept steps get
        their spans. `cut_short`: we stopped the program (StopDiagnosis), so the unfinished
        step's forwards that still awaited a gradient were training whose backward never got
        to run (the budget ran out at a no-grad forward between a student's forward and its
        backward: a teacher's, a target network's), not evaluation with autograd in train mode."""
        now = self.clock()
        self._close(now)
        self._settle()
        for step in self.steps:
            if step.pieces is not None:
                _phases_of(step)  # summed before its pieces go
                step.spans, step.pieces = _spans(step.pieces, self.origin), None
        if cut_short:
            self._leave_out_unfinished_training(self._state)
        spans, forwards = self._eval_spans(self._state, final=not cut_short)
        self.eval_forwards.extend(forwards)
        for span_start, span_end in spans:
            self.eval_seconds += span_end - span_start
            self.tail_eval_windows.append(
                (span_start, _next_forward(self._state, span_end, now, spans))
            )
        self._begin(_StepState(now))

    # -- internals ----------------------------------------------------------------------------
    def _leave_out_unfinished_training(self, state: _StepState) -> None:
        """The step we cut short: its last no-gradient forwards after its last backward, at a
        call that fed the training of the steps before (World Models' MDN-RNN encodes `obs` and
        `next_obs` with its frozen VAE, then trains: a budget stop at the second encoding left
        the first one "1 of 1 evaluation forward(s)", D303), are the start of a training step
        that never got to its backward: left out, neither training nor evaluation. Only the
        trailing run: the same encoder before an evaluation forward (the MDN-RNN's test pass)
        is that evaluation's work."""
        if not self._beside_training:
            return
        last_backward = max(state.backward_ends, default=float("-inf"))
        forwards = state.forwards
        while forwards and (
            not forwards[-1].got_grad
            and not forwards[-1].awaits_grad
            and forwards[-1].t0 > last_backward
            and (forwards[-1].module_id, forwards[-1].location) in self._beside_training
        ):
            forwards.pop()

    def _begin(self, state: _StepState) -> None:
        """`state` is the step in progress's: the probes' shortcuts to it rebound with it."""
        self._state = state
        self.counters = state.counters
        self.step_forwards = state.forwards

    def _close(self, now: float) -> None:
        if now > self._t_last:
            phase = self.stack[-1] if self.stack else OTHER
            self._state.intervals.append((phase, self._t_last, now))
        self._t_last = now

    def _settle(self) -> None:
        """Decide the unsettled step's waiting forwards: the step after it has closed."""
        if self._unsettled is None:
            return
        record, state = self._unsettled
        self._unsettled = None
        self._fill(record, state, final=True)
        _drop_references(record, state)

    @staticmethod
    def _eval_groups(state: _StepState, final: bool):
        """(start, end, forwards) for each run of consecutive evaluation forwards in the step."""
        groups: list[list[ForwardRecord]] = []
        previous_was_eval = False
        for forward in state.forwards:
            is_eval = forward.settled_as_evaluation(final)
            if is_eval and previous_was_eval:
                groups[-1].append(forward)
            elif is_eval:
                groups.append([forward])
            previous_was_eval = is_eval
        for group in groups:
            yield group[0].t0, group[-1].t1, group

    def _eval_spans(self, state: _StepState, final: bool) -> tuple[list, list[ForwardRecord]]:
        """The step's evaluation spans (forward runs and evaluation-loader waits, overlaps
        merged), in time order, and the evaluation forwards."""
        for forward in state.forwards:
            if not forward.got_grad and forward.settled_as_evaluation(final):
                break
        else:
            return [], []  # the usual training step (every forward got its gradient)
        _link_inside_one_graph(state)
        _link_beside_training(state, self.trains)
        intervals, forwards = [], []
        for span_start, span_end, group in self._eval_groups(state, final):
            intervals.append((span_start, span_end))
            forwards.extend(group)
        if forwards and state.data_waits:
            intervals.extend(_evaluation_waits(state, {id(f) for f in forwards}))
        merged: list[tuple[float, float]] = []
        for a, b in sorted(intervals):
            if merged and a <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
            else:
                merged.append((a, b))
        return merged, forwards

    def _fill(self, record: StepRecord, state: _StepState, final: bool) -> None:
        """(Re)compute the record's timings; evaluation booked so far for it is replaced."""
        if state.called_in_backward:
            _mark_run_again_in_backward(state, self.submodule_ids)
        training = []
        for forward in state.forwards:  # a loop, not calls: this runs at every step close
            if forward.got_grad:
                training.append(forward)
        if len(training) < len(state.forwards):  # a forward without gradient: evaluation?
            spans, forwards = self._eval_spans(state, final)
            for forward in state.forwards:
                if not forward.got_grad and forward.feeds_training():
                    self._beside_training.add((forward.module_id, forward.location))
        else:
            spans, forwards = [], []
        eval_seconds = sum(b - a for a, b in spans) if spans else 0.0
        if forwards:
            judged = {id(f) for f in record.eval_forwards}
            new = [f for f in forwards if id(f) not in judged]
            self.eval_forwards.extend(new)
            record.eval_forwards.extend(new)
        self.eval_seconds += eval_seconds - record.eval_seconds
        # the spans are made of the pieces after the run (close()): one pass here, not two
        pieces = record.pieces = _cut_out(state.intervals, spans) if spans else state.intervals
        record._phases = None  # summed when read (_phases_of)
        # the pieces' lengths summed in C calls: a step's intervals without a Python loop
        wall = sum(map(sub, map(_END, pieces), map(_START, pieces)))
        self.train_seconds += wall - record.wall  # a settled step's timings replace its first
        record.wall = wall
        groups = per_update(state.backward_ends, state.update_ends)
        record.batch_size = batch_size(training, groups)
        record.micro_batches = max(map(len, groups), default=1)  # a group holds one or more
        record.counters = dict(state.counters)
        record.loss = state.loss
        record.eval_seconds = eval_seconds
        step_end = record.end + self.origin
        record.eval_windows = (
            [(a, _next_forward(state, b, step_end, spans)) for a, b in spans] if spans else []
        )
        record.eval_spans = list(spans)
        record.training_forwards = training


def _drop_references(record: StepRecord, state: _StepState) -> None:
    """The step is decided: its forwards' weak references to their tensors are dropped, but the
    first training forward's (the next steps' forwards are linked with their own step's, and the
    run's end compares each step's first training input with the step before's). Kept, they were
    two objects a forward for the garbage collector to go through in every full collection, which
    they made more frequent: the plain run keeps none (an RL loop's fifty forwards a step)."""
    first = record.training_forwards[0] if record.training_forwards else None
    for forward in state.forwards:
        if forward is not first:
            forward.input_ref = forward.output_ref = None


MAX_SPANS = 64  # per step: a loop with thousands of phase switches keeps its first ones


def _cut_out(intervals, cut) -> list:
    """The intervals with the evaluation spans `cut` taken out (split around them)."""
    return [(phase, x, y) for phase, t0, t1 in intervals for x, y in _outside(t0, t1, cut)]


def _phase_seconds(intervals) -> dict[str, float]:
    """Seconds per phase of intervals longer than zero (the tracker appends only those): the one
    pass over a step's intervals at its close."""
    phases: dict[str, float] = {}
    seconds = phases.get  # bound once
    for phase, t0, t1 in intervals:
        phases[phase] = seconds(phase, 0.0) + (t1 - t0)
    return phases


def _spans(intervals, origin: float) -> list[tuple[str, float, float]]:
    """The intervals relative to `origin`, same-phase neighbours merged, the first MAX_SPANS."""
    out: list[tuple[str, float, float]] = []
    last_phase, last_end = None, None
    for phase, t0, t1 in intervals:
        if phase == last_phase and t0 == last_end:  # contiguous with the previous: one span
            out[-1] = (phase, out[-1][1], t1 - origin)
        elif len(out) < MAX_SPANS:
            out.append((phase, t0 - origin, t1 - origin))
        else:
            break
        last_phase, last_end = phase, t1
    return out


def _outside(t0: float, t1: float, cut) -> list[tuple[float, float]]:
    pieces = [(t0, t1)]
    for a, b in cut:
        pieces = [p for x, y in pieces for p in ((x, min(y, a)), (max(x, b), y)) if p[1] > p[0]]
    return pieces


def _evaluation_waits(state: _StepState, evaluation: set[int]):
    """The step's DataLoader waits that fed an evaluation forward (ids in `evaluation`)."""
    starts = [f.t0 for f in state.forwards]  # in call order: sorted
    for number, (t0, t1, ends_epoch) in enumerate(state.data_waits):
        if ends_epoch:  # StopIteration: the epoch's last batch went to the forward before it
            index = bisect.bisect_left(starts, t0) - 1
        else:
            index = bisect.bisect_left(starts, t1)
        if not (0 <= index < len(starts) and id(state.forwards[index]) in evaluation):
            continue
        # a batch that also feeds a training forward before the next wait is training data,
        # though a forward under no_grad reads it first (a DQN's target network, a teacher)
        following = state.data_waits[number + 1 :]
        until = min((w[0] for w in following if w[0] >= t1), default=float("inf"))
        if ends_epoch or all(id(f) in evaluation for f in state.forwards[index:] if f.t0 < until):
            yield t0, t1


def _next_forward(state: _StepState, after: float, default: float, spans=()) -> float:
    """Where an evaluation window that ends its forwards at `after` closes: the start of the
    step's first forward after it, or of the first DataLoader wait after it outside the
    evaluation `spans` (the next epoch's training loader starting its workers, between a
    validation at an epoch's end and the first training forward, is training data time: the
    line sampler booked pytorch-fm's `for ... in enumerate(tk0)` to evaluation); else
    `default`."""
    end = min((f.t0 for f in state.forwards if f.t0 >= after), default=default)
    for t0, _, _ in state.data_waits:
        if after <= t0 < end and not any(a <= t0 < b for a, b in spans):
            return t0
    return end
