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


def _median_phase_share(run: RunObservation, phase: str) -> tuple[float, float]:
    """(median step seconds, median share of `phase`) over the measured steps."""
    steps = [s for s in run.steps if s.wall_s > 0]
    if not steps:
        return 0.0, 0.0
    return (
        statistics.median(s.wall_s for s in steps),
        statistics.median(s.phases.get(phase, 0.0) / s.wall_s for s in steps),
    )


def _probe(session, name: str):
    return next((p for p in session.probes if type(p).__name__ == name), None)


class _Plan:
    """The probes this run calls for, each a (label, work) pair run in order while budget lasts."""

    def __init__(self, session, run: RunObservation) -> None:
        self.session, self.run = session, run
        self._replay: Replay | None = None
        self._replay_why = ""
        self._replay_made = False
        self.items: list[tuple[str, Callable[[float], list[WhatIfTiming]]]] = []

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
        """Cheapest first: the side DataLoader (worker start-ups) takes what is left."""
        self._plan_optimizer()
        self._plan_evaluation()
        self._plan_data()

    def _plan_data(self) -> None:
        from torchdoctor.diagnose.whatif.data import measure_workers, unsupported

        step_s, share = _median_phase_share(self.run, "data")
        probe = _probe(self.session, "LoaderProbe")
        if probe is None or share < MIN_PHASE_SHARE:
            return
        loaders = [
            (ld, probe.loaders[id(ld)].observation)
            for ld in probe.retired
            if id(ld) in probe.loaders
        ]
        training = [(ld, o) for ld, o in loaders if o.role != "eval" and o.batches > 0]
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

        self.items.append(("DataLoader workers", work))

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

        self.items.append(("evaluation forward", work))

    def _plan_optimizer(self) -> None:
        from torchdoctor.diagnose.whatif.optimizer import measure_optimizer

        _, share = _median_phase_share(self.run, "optimizer")
        probe = _probe(self.session, "OptimizerProbe")
        if probe is None or share < MIN_PHASE_SHARE:
            return
        stepped = [(o, obs) for o, obs in probe.optimizers.values() if obs.steps > 0]
        if not stepped:
            return
        optimizer = max(stepped, key=lambda pair: pair[1].param_bytes)[0]
        self.items.append(
            ("optimizer step", lambda allowance: measure_optimizer(optimizer, allowance))
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
            plan.build()
            for index, (label, work) in enumerate(plan.items):
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
        _release(session)
    if whatif.timings or whatif.skipped:
        run.notes.append(_summary(run))


def _release(session) -> None:
    probe = _probe(session, "LoaderProbe")
    if probe is not None:
        probe.retired = []


def _summary(run: RunObservation) -> str:
    whatif = run.whatif
    words = (
        f"what-if probes: {len(whatif.timings)} fix(es) timed on copies of the program's objects "
        f"in {whatif.seconds:.1f} s (budget {whatif.budget_s:.1f} s, 10% of the diagnosed time)"
    )
    if whatif.skipped:
        words += "; not measured: " + "; ".join(whatif.skipped)
    return words
