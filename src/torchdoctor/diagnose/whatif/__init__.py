"""What-if probes: measured counterfactuals on the program's own objects.

Once per run, after the program stopped (our patches removed, its steps all measured), each probe
times a piece of the program's work as it ran and with one fix, on copies: a deep copy of the
model on the real batch it last trained on, a clone of the optimizer's parameters, gradients and
state, a side DataLoader over the same dataset. The program's RNG streams are put back afterwards
(`program_state_kept`), so code that goes on after the diagnosis (`watch()`) sees the same random
numbers. All probes together stay within a budget, WHATIF_SHARE of the diagnosed wall time; what
does not fit is skipped with a note. Rules read the results from `run.whatif` (observations).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable

from torchdoctor.diagnose.observations import RunObservation, WhatIfTiming
from torchdoctor.diagnose.whatif.guard import Budget, program_state_kept
from torchdoctor.diagnose.whatif.replay import Replay, make_replay

WHATIF_SHARE = 0.10  # of the diagnosed wall time
MIN_PHASE_SHARE = 0.05  # a phase under this share of the step is not worth a probe
MIN_ALLOWANCE_S = 0.05  # less budget than this left: the probe is skipped


def _median_step_s(run: RunObservation) -> float:
    steps = [s.wall_s for s in run.steps if s.wall_s > 0]
    return statistics.median(steps) if steps else 0.0


def _run_share(run: RunObservation, phase: str) -> float:
    """Share of the measured window's wall time (steps plus evaluation) spent in `phase`, or in
    evaluation for phase "evaluation": the stake a probe of that phase's fix plays for."""
    total = sum(s.wall_s + s.evaluation_s for s in run.steps)
    if total <= 0:
        return 0.0
    if phase == "evaluation":
        return sum(s.evaluation_s for s in run.steps) / total
    return sum(s.phases.get(phase, 0.0) for s in run.steps) / total


def _probe(session, name: str):
    return next((p for p in session.probes if type(p).__name__ == name), None)


class _Plan:
    """The probes this run calls for, each a (label, work) pair run in order while budget lasts."""

    def __init__(self, session, run: RunObservation) -> None:
        self.session, self.run = session, run
        self._replay: Replay | None = None
        self._replay_why = ""
        self._replay_made = False
        # (stake, label, work): stake is the share of the run the fix addresses
        self.items: list[tuple[float, str, Callable[[float], list[WhatIfTiming]]]] = []

    def replay(self) -> Replay | None:
        if not self._replay_made:
            forward = _probe(self.session, "ForwardProbe")
            calls = getattr(forward, "training_calls", {}) if forward else {}
            self._replay, self._replay_why = make_replay(calls)
            self._replay_made = True
            if self._replay is None:
                self.run.whatif.skipped.append(f"model copies: {self._replay_why}")
        return self._replay

    def build(self) -> None:
        """The largest stake first: when the budget runs short, the small fixes go unmeasured."""
        self._plan_optimizer()
        self._plan_evaluation()
        self._plan_data()
        self._plan_anomaly()
        self._plan_profiler()
        self.items.sort(key=lambda item: -item[0])

    def _plan_data(self) -> None:
        from torchdoctor.diagnose.whatif.data import measure_workers, unsupported

        step_s, share = _median_step_s(self.run), _run_share(self.run, "data")
        probe = _probe(self.session, "LoaderProbe")
        if probe is None or share < MIN_PHASE_SHARE:
            return
        loaders = [
            (ld, probe.loaders[id(ld)].observation)
            for ld in probe.retired
            if id(ld) in probe.loaders
        ]
        training = [
            (ld, o)
            for ld, o in loaders
            if o.role != "eval" and o.batches > 0 and o.dataset_type != "TensorDataset"
        ]  # in-memory tensors: workers only add hand-over costs (rules D108/D109 say so)
        if not training:
            return
        loader, observation = max(training, key=lambda pair: pair[1].wait_s)
        why = unsupported(loader)
        if why:
            self.run.whatif.skipped.append(f"DataLoader workers at {observation.location}: {why}")
            return

        def work(allowance: float) -> list[WhatIfTiming]:
            replay = self.replay()
            return measure_workers(loader, replay, step_s, allowance) if replay else []

        self.items.append((share, "DataLoader workers", work))

    def _plan_evaluation(self) -> None:
        from torchdoctor.diagnose.whatif.evaluation import measure_evaluation

        ev = self.run.evaluation
        with_grad = ev.with_grad > 0
        in_train = ev.in_train_mode > 0 and ev.train_mode_sensitive
        if not (with_grad or in_train):
            return

        def work(allowance: float) -> list[WhatIfTiming]:
            replay = self.replay()
            if replay is None:
                return []
            return measure_evaluation(replay, with_grad, in_train, allowance)

        self.items.append((_run_share(self.run, "evaluation"), "evaluation forward", work))

    def _plan_anomaly(self) -> None:
        from torchdoctor.diagnose.whatif.anomaly import measure_anomaly

        if not self.run.environment.anomaly_detection:
            return

        def work(allowance: float) -> list[WhatIfTiming]:
            replay = self.replay()
            return measure_anomaly(replay, allowance) if replay else []

        stake = _run_share(self.run, "forward") + _run_share(self.run, "backward")
        self.items.append((stake, "anomaly detection", work))

    def _plan_profiler(self) -> None:
        from torchdoctor.diagnose.whatif.profiler import measure_profiler

        habits = self.run.habits
        if habits.profiler_active_share is None or habits.profiler_active_share < 0.5:
            return
        options = list(habits.profiler_options)
        optimizer = self._stepped_optimizer()

        def work(allowance: float) -> list[WhatIfTiming]:
            replay = self.replay()
            return measure_profiler(replay, options, allowance, optimizer) if replay else []

        # the profiler slows every op: its stake is all the phases where ops run
        phases = ("forward", "backward", "optimizer", "other")
        stake = sum(_run_share(self.run, phase) for phase in phases)
        self.items.append((stake, "torch.profiler", work))

    def _stepped_optimizer(self):
        """The program's optimizer that stepped, the one over the most parameter bytes."""
        probe = _probe(self.session, "OptimizerProbe")
        stepped = (
            [(o, obs) for o, obs in probe.optimizers.values() if obs.steps > 0] if probe else []
        )
        return max(stepped, key=lambda pair: pair[1].param_bytes)[0] if stepped else None

    def _plan_optimizer(self) -> None:
        from torchdoctor.diagnose.whatif.optimizer import measure_optimizer

        share = _run_share(self.run, "optimizer")
        optimizer = self._stepped_optimizer()
        if optimizer is None or share < MIN_PHASE_SHARE:
            return
        self.items.append(
            (share, "optimizer step", lambda allowance: measure_optimizer(optimizer, allowance))
        )


def run_whatifs(session, run: RunObservation, budget_s: float | None = None) -> None:
    """Fill `run.whatif`; `budget_s` None: WHATIF_SHARE of the time since the diagnosis began."""
    if run.warmup_only or not run.steps or run.distributed is not None:
        return
    tracker = session.tracker
    seconds = (
        budget_s if budget_s is not None else WHATIF_SHARE * (tracker.clock() - tracker.origin)
    )
    budget = Budget(seconds)
    whatif = run.whatif
    whatif.budget_s = seconds
    plan = _Plan(session, run)
    try:
        with program_state_kept():
            _build(plan)
            for index, (_, label, work) in enumerate(plan.items):
                left = len(plan.items) - index
                allowance = budget.left / left
                if allowance < MIN_ALLOWANCE_S:
                    whatif.skipped.append(f"{label}: over the time budget ({seconds:.1f} s)")
                    continue
                try:
                    whatif.timings.extend(work(allowance))
                except Exception as exc:  # a program's object we cannot replay: skip, say so
                    whatif.skipped.append(f"{label}: {type(exc).__name__}: {exc}".splitlines()[0])
    finally:
        whatif.seconds = budget.spent
    if whatif.timings or whatif.skipped:
        run.notes.append(_summary(run))


def _build(plan: _Plan) -> None:
    """Plan the probes; a failure here is torchdoctor's, and costs the probes, not the report."""
    from torchdoctor.diagnose.rules_runner import strict

    try:
        plan.build()
    except Exception as exc:
        if strict():
            raise
        plan.items = []
        plan.run.whatif.skipped.append(f"all: torchdoctor could not plan them ({exc!r})")


def release_program_objects(session) -> None:
    """Drop the program's loaders, models and batches the probes kept for the what-ifs: a
    loader's persistent workers shut down when it goes, not at some later garbage collection."""
    loaders = _probe(session, "LoaderProbe")
    if loaders is not None:
        loaders.retired = []
    forward = _probe(session, "ForwardProbe")
    if forward is not None:
        forward.training_calls = {}


def _summary(run: RunObservation) -> str:
    whatif = run.whatif
    words = (
        f"what-if probes: {len(whatif.timings)} fix(es) timed on copies of the program's objects "
        f"in {whatif.seconds:.1f} s (budget {whatif.budget_s:.1f} s, 10% of the diagnosed time)"
    )
    if whatif.skipped:
        words += "; not measured: " + "; ".join(whatif.skipped)
    return words
