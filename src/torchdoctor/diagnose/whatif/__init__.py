"""What-if probes: measured counterfactuals on the program's own objects.

Once per run, after the program stopped (our patches removed, its steps all measured), each probe
times a piece of the program's work as it ran and with one fix, on copies: a deep copy of the
model on the real batch it last trained on, a clone of the optimizer's parameters, gradients and
state, a side DataLoader over the same dataset. The program's RNG streams are put back afterwards
(`program_state_kept`), so code that goes on after the diagnosis (`watch()`) sees the same random
numbers. All probes together stay within a budget, WHATIF_SHARE of the diagnosed wall time, the
largest stakes first; what does not fit is skipped with a note (a timed probe refuses rounds it
cannot finish within what is left: guard.OverBudget). Rules read the results from `run.whatif` (observations).
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import replace

from torchdoctor.diagnose.observations import RunObservation, WhatIfTiming
from torchdoctor.diagnose.whatif.guard import (
    MIN_ROUNDS,
    Budget,
    OverBudget,
    program_state_kept,
    require,
)
from torchdoctor.diagnose.whatif.replay import Replay, at_typical_batch, make_replay

WHATIF_SHARE = 0.10  # of the diagnosed wall time
# A short run's budget is raised, up to this share of the diagnosed time, to what the DataLoader
# workers what-if needs at least: a 1.5 s run (d101) had 0.15 s, the probe never fitted, and D101
# stated an estimate (36%) ten times what `--try workers` gained (3%). The evaluation what-if too:
# a 2.4 s run of d302 had 0.24 s, the 26 ms evaluation forwards did not fit, and D302 stated no
# saving where `--try inference_mode` gained 23%. Only these probes: their findings' savings
# have no stand-in (no other probe times a loader's workers or an evaluation forward), and only
# where they were planned.
SHORT_RUN_SHARE = 0.25
# probes a short run's budget is raised to the floor of: those whose finding rests on them (the
# larger batch where the ops are not trivial: D202 then fires on a measured gain only, and on a
# batch of 2 through 1024-wide layers it came and went with the load, 0.2-0.3 s budgets)
RAISED_FOR = ("DataLoader workers", "evaluation forward", "larger batch")
MIN_PHASE_SHARE = 0.05  # a phase under this share of the step is not worth a probe
MIN_ALLOWANCE_S = 0.05  # less budget than this left: the probe is skipped
BATCH_TOLERANCE = 0.25  # the replayed batch may differ this much from the typical training batch
MAX_MEMORY_FOR_4X = 0.5  # of GPU memory at the run's peak: above it, no 4x-batch replay on CUDA
FORWARD_BACKWARD = ("forward", "backward")
# A probe's least time is predicted at this share of its calls at the steps' observed times: the
# copies run without our hooks (on a 1 ms step the hooks took as long as the work), and a fix's
# alternative may take half the time as run; k times the batch takes at least 0.8x the batch
# (batch.MIN_PLAUSIBLE_TOTAL), so it is not counted at k
LEAST_SHARE = 0.5


def _median_step_s(run: RunObservation) -> float:
    steps = [s.wall_s for s in run.steps if s.wall_s > 0]
    return statistics.median(steps) if steps else 0.0


def _median_rest_s(run: RunObservation, phase: str) -> float:
    """Median seconds per step outside `phase`: the work a fix of that phase runs beside."""
    rest = [s.wall_s - s.phases.get(phase, 0.0) for s in run.steps if s.wall_s > 0]
    return max(0.0, statistics.median(rest)) if rest else 0.0


def _median_phases_s(run: RunObservation, *phases: str) -> float:
    """Median seconds per step in `phases`: what one call of the program's work took there."""
    values = [sum(s.phases.get(p, 0.0) for p in phases) for s in run.steps if s.wall_s > 0]
    return statistics.median(values) if values else 0.0


def _run_share(run: RunObservation, phase: str) -> float:
    """Share of the measured window's wall time (steps plus evaluation) spent in `phase`, or in
    evaluation for phase "evaluation": the stake a probe of that phase's fix plays for."""
    total = sum(s.wall_s + s.evaluation_s for s in run.steps)
    if total <= 0:
        return 0.0
    if phase == "evaluation":
        return sum(s.evaluation_s for s in run.steps) / total
    return sum(s.phases.get(phase, 0.0) for s in run.steps) / total


def _typical_rows(run: RunObservation) -> int | None:
    """The median first dimension of the steps' training forwards (None: not seen)."""
    rows = [s.training_forward_rows for s in run.steps if s.training_forward_rows]
    return round(statistics.median(rows)) if rows else None


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
        # label: the least a probe's work is predicted to take (its fewest runs, from the step
        # and start-up times observed); the probes before it leave it that much of the budget
        self.floors: dict[str, float] = {}
        # labels of probes whose finding ranks after every problem (D204 on a CPU: the user's
        # choice, `info`): they run after the others, whatever their stake
        self.after_problems: set[str] = set()
        # label: what the probe's warm-up and fewest rounds are predicted to take from the
        # steps' observed phases (`fewest_rounds_s`); one that does not fit in what is left of
        # the budget is not begun: on a 6 s step the warm-ups alone ran the what-ifs to 2.7x
        # their budget (yolov1-mini: 37.8 s of 14 s) before a round was refused
        self.least: dict[str, float] = {}
        # floors a short run's budget is raised to that are not floors of the probe's allowance
        # (the larger batch's: as an allowance floor, its stake first, it spent a 2 s budget
        # and the optimizer probe on d210 got none)
        self.raise_only: dict[str, float] = {}

    def fewest_rounds_s(self, label: str, *calls: tuple[str, ...]) -> None:
        """Record `label`'s least time: its warm-up and MIN_ROUNDS rounds of its `calls` (one
        per variant: the work as run, each alternative, a reference timed beside them), each
        at the steps' median time in its phases, times LEAST_SHARE (a lower bound: what may
        not fit is still tried)."""
        per_round = sum(_median_phases_s(self.run, *phases) for phases in calls)
        self.least[label] = LEAST_SHARE * (1 + MIN_ROUNDS) * per_round

    def replay(self) -> Replay | None:
        if not self._replay_made:
            forward = _probe(self.session, "ForwardProbe")
            calls = getattr(forward, "training_calls", {}) if forward else {}
            self._replay, self._replay_why = make_replay(calls)
            self._replay_made = True
            if self._replay is not None:
                self._replay = at_typical_batch(self._replay, _typical_rows(self.run))
            if self._replay is None:
                self.run.whatif.skipped.append(f"model copies: {self._replay_why}")
        return self._replay

    def build(self) -> None:
        """The largest stake first: when the budget runs short, the small fixes go unmeasured."""
        self._plan_optimizer()
        self._plan_evaluation()
        self._plan_collate()  # before the workers (same stake): a few collates, not a side run
        self._plan_data()
        self._plan_respawn()
        self._plan_batched_fetch()
        self._plan_anomaly()
        self._plan_precision()
        self._plan_batch()
        self._plan_cuda()
        self._plan_copies()
        self._plan_padded_dims()
        self._plan_profiler()
        self.items.sort(key=lambda item: (item[1] in self.after_problems, -item[0]))

    def _plan_data(self) -> None:
        from torchdoctor.diagnose.whatif.data import fewest_runs_s, measure, unsupported

        step_s, share = _median_step_s(self.run), _run_share(self.run, "data")
        if share < MIN_PHASE_SHARE:
            return
        loaders = self._retired_loaders()
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

        rest_s = _median_rest_s(self.run, "data")

        def work(allowance: float) -> list[WhatIfTiming]:
            replay = self.replay()
            return measure(loader, replay, step_s, rest_s, allowance) if replay else []

        self.items.append((share, "DataLoader workers", work))
        self.floors["DataLoader workers"] = fewest_runs_s(loader, step_s)

    def _retired_loaders(self) -> list[tuple]:
        """(loader, observation) for each DataLoader the program built, kept by the probe."""
        probe = _probe(self.session, "LoaderProbe")
        if probe is None:
            return []
        return [
            (ld, probe.loaders[id(ld)].observation)
            for ld in probe.retired
            if id(ld) in probe.loaders
        ]

    def _plan_loader(self, label: str, candidates: list[tuple], key, module, floor=None) -> None:
        """Plan `module`'s probe (its `unsupported` and `measure`) on the candidate loaders, the
        largest `key` first, when the data phase is worth it; say why a loader cannot be timed.
        `floor(observation)`: the least the probe's work on that loader is predicted to take (a
        loader whose floor does not fit in what is left is not begun).
        A loader whose measurement comes back empty (its dataset cannot give the fix's batches,
        or gives other ones) hands over to the next: which loaders qualify is often a timing
        near a threshold, so the first may not be the one the fix applies to."""
        share = _run_share(self.run, "data")
        if share < MIN_PHASE_SHARE or not candidates:
            return
        timeable = []
        for loader, observation in sorted(candidates, key=lambda pair: -key(pair[1])):
            why = module.unsupported(loader)
            if why:
                self.run.whatif.skipped.append(f"{label} at {observation.location}: {why}")
            else:
                least = floor(observation) if floor else 0.0
                timeable.append((loader, observation.location, least))

        def work(allowance: float) -> list[WhatIfTiming]:  # the timing names its loader
            for loader, location, least in timeable:
                require(least, f"{label} at {location}")
                timings = module.measure(loader, allowance)
                if timings:
                    return [replace(t, subject=t.subject or location) for t in timings]
            return []

        if timeable:
            self.items.append((share, label, work))
            self.floors[label] = min(least for *_, least in timeable)

    def _plan_respawn(self) -> None:
        from torchdoctor.diagnose.whatif import respawn

        respawning = [
            (ld, o)
            for ld, o in self._retired_loaders()
            if o.num_workers > 0 and not o.persistent_workers and o.epochs_started >= 2
        ]  # epoch starts wait in the data phase
        self._plan_loader(
            "worker start-up",
            respawning,
            lambda o: sum(o.worker_startup_s),
            respawn,
            respawn.fewest_rounds_s,
        )

    def _plan_collate(self) -> None:
        from torchdoctor.diagnose.rules._loaders import heavy_collate
        from torchdoctor.diagnose.whatif import collate

        heavy = [
            (ld, o)
            for ld, o in self._retired_loaders()
            if o.role != "eval" and o.batches > 0 and heavy_collate(self.run, o)
        ]  # the loaders rule D111 talks about
        self._plan_loader("whole-batch collate", heavy, lambda o: o.collate_s or 0.0, collate)

    def _plan_batched_fetch(self) -> None:
        from torchdoctor.diagnose.rules._loaders import in_memory
        from torchdoctor.diagnose.whatif import batched_fetch

        indexed = [
            (ld, o)
            for ld, o in self._retired_loaders()
            if o.role != "eval"
            and o.batches > 0
            and not o.num_workers
            and o.batch_size is not None  # None: already fetched whole, nothing to measure
            and in_memory(self.run, o)
        ]  # the loaders rule D108 talks about: samples only indexed from memory
        self._plan_loader(
            "batched fetch",
            indexed,
            lambda o: o.wait_s,
            batched_fetch,
            batched_fetch.fewest_rounds_s,
        )

    def _plan_evaluation(self) -> None:
        from torchdoctor.diagnose.whatif.evaluation import fewest_forwards, measure_evaluation

        ev = self.run.evaluation
        with_grad = ev.with_grad > 0
        in_train = ev.in_train_mode > 0 and ev.train_mode_sensitive
        if not (with_grad or in_train):
            return

        def work(allowance: float) -> list[WhatIfTiming]:
            replay = self.replay()
            if replay is None:
                return []
            return measure_evaluation(
                replay, with_grad, in_train, allowance, ev.batch_size, ev.with_grad_page_faults
            )

        self.items.append((_run_share(self.run, "evaluation"), "evaluation forward", work))
        if ev.forwards > 0 and ev.forward_seconds > 0:
            per_forward = ev.forward_seconds / ev.forwards
            self.floors["evaluation forward"] = fewest_forwards(with_grad, in_train) * per_forward

    def _plan_anomaly(self) -> None:
        from torchdoctor.diagnose.whatif.anomaly import measure_anomaly

        if not self.run.environment.anomaly_detection:
            return

        def work(allowance: float) -> list[WhatIfTiming]:
            replay = self.replay()
            return measure_anomaly(replay, allowance) if replay else []

        stake = _run_share(self.run, "forward") + _run_share(self.run, "backward")
        self.items.append((stake, "anomaly detection", work))
        self.fewest_rounds_s("anomaly detection", FORWARD_BACKWARD, FORWARD_BACKWARD)

    def _observed(self, optimizer):
        """The OptimizerObservation of the program's `optimizer`."""
        probe = _probe(self.session, "OptimizerProbe")
        return probe.optimizers[id(optimizer)][1]

    def _largest_optimizer(self):
        """The program's optimizer over the most parameter bytes that stepped (None: none)."""
        probe = _probe(self.session, "OptimizerProbe")
        stepped = (
            [(o, obs) for o, obs in probe.optimizers.values() if obs.steps > 0] if probe else []
        )
        return max(stepped, key=lambda pair: pair[1].param_bytes)[0] if stepped else None

    def _plan_profiler(self) -> None:
        from torchdoctor.diagnose.whatif.profiler import measure_profiler

        options = self._program_profiler()
        if options is None:
            return
        optimizer = self._largest_optimizer()

        def work(allowance: float) -> list[WhatIfTiming]:
            replay = self.replay()
            return measure_profiler(replay, options, allowance, optimizer) if replay else []

        # the profiler slows every op: its stake is all the phases where ops run
        phases = ("forward", "backward", "optimizer", "other")
        stake = sum(_run_share(self.run, phase) for phase in phases)
        self.items.append((stake, "torch.profiler", work))
        self.fewest_rounds_s("torch.profiler", *[(*FORWARD_BACKWARD, "optimizer")] * 2)

    def _program_profiler(self) -> list[str] | None:
        """The options of the torch.profiler the program kept on over most of its steps (None:
        no such profiler)."""
        habits = self.run.habits
        if habits.profiler_active_share is None or habits.profiler_active_share < 0.5:
            return None
        return list(habits.profiler_options)

    def _plan_optimizer(self) -> None:
        from torchdoctor.diagnose.whatif.optimizer import measure_optimizer
        from torchdoctor.diagnose.whatif.profiler import profiler_arguments

        share = _run_share(self.run, "optimizer")
        optimizer = self._largest_optimizer()
        if optimizer is None or share < MIN_PHASE_SHARE:
            return
        options = self._program_profiler()  # the steps ran under it: the timed copies do too
        profiler = None
        if options is not None:
            device_type = self.run.environment.device_type
            profiler = profiler_arguments(options, device_type)

        anomaly = bool(self.run.environment.anomaly_detection)

        def work(allowance: float) -> list[WhatIfTiming]:
            from torchdoctor.diagnose.whatif.anomaly import forward_backward_in_mode

            replay = self.replay()
            # the reference in the mode the steps ran in: timed without anomaly mode after a
            # program switched it off, the mode's cost in the observed phases was taken for
            # the probes' hooks and the step "without probes" came out short (D210 inflated)
            reference = forward_backward_in_mode(replay, anomaly) if replay is not None else None
            return measure_optimizer(optimizer, allowance, profiler, reference, faults, anomaly)

        faults = self._observed(optimizer).step_page_faults

        self.items.append((share, "optimizer step", work))
        # the clone's step as run and with the fix; the replay's forward and backward beside
        self.fewest_rounds_s("optimizer step", ("optimizer",), ("optimizer",), FORWARD_BACKWARD)

    def _replayed(self, measure: Callable[[Replay, float], list[WhatIfTiming]]):
        """A probe's work on the replay (none: nothing is timed)."""

        def work(allowance: float) -> list[WhatIfTiming]:
            replay = self.replay()
            return measure(replay, allowance) if replay else []

        return work

    def _plan_precision(self) -> None:
        from torchdoctor.diagnose.rules._common import on_cuda, uses_autocast
        from torchdoctor.diagnose.rules.d201_float64_compute import float64_share
        from torchdoctor.diagnose.whatif.precision import (
            EvaluationForward,
            autocast_dtypes,
            measure_autocast,
            measure_float32,
            native_bf16_cpu,
        )

        stake = _run_share(self.run, "forward") + _run_share(self.run, "backward")
        if stake < MIN_PHASE_SHARE:
            return
        if float64_share(self.run) is not None:
            optimizer = self._largest_optimizer()
            ev = self.run.evaluation  # the fix makes the evaluation float32 too
            evaluation = (
                EvaluationForward(ev.with_grad * 2 >= ev.forwards, ev.batch_size)
                if ev.forwards > 0
                else None
            )
            stake += _run_share(self.run, "optimizer") + _run_share(self.run, "evaluation")
            self.fewest_rounds_s("float32 instead of float64", FORWARD_BACKWARD, FORWARD_BACKWARD)
            self.items.append(
                (
                    stake,
                    "float32 instead of float64",
                    self._replayed(
                        lambda replay, allowance: measure_float32(
                            replay, optimizer, allowance, evaluation
                        )
                    ),
                )
            )
            return
        p = self.run.precision
        if uses_autocast(self.run) or p.float32_ops <= 0:
            return
        env = self.run.environment
        if not autocast_dtypes(env.device_type) or (on_cuda(self.run) and not env.tensor_cores):
            return
        if not on_cuda(self.run) and native_bf16_cpu() is False:
            # emulated bf16 measured 1.7-2.3x slower than float32 on AVX-512 without BF16: D204
            # stays silent after such a measurement, so its budget goes to the other probes
            return
        self.items.append((stake, "autocast", self._replayed(measure_autocast)))
        self.fewest_rounds_s("autocast", FORWARD_BACKWARD, FORWARD_BACKWARD)
        if not on_cuda(self.run):  # D204 on a CPU: information, ranked after the problems
            self.after_problems.add("autocast")

    def _plan_batch(self) -> None:
        from torchdoctor.diagnose.rules._common import memory_use, on_cuda
        from torchdoctor.diagnose.rules.d202_batch_too_small import batch_candidate
        from torchdoctor.diagnose.whatif.batch import (
            factors_that_fit,
            measure_batch,
            replay_batch,
            sequence_first,
        )

        bound = batch_candidate(self.run)
        if bound is None or not bound.micro_batch:
            return
        use = memory_use(self.run)
        if on_cuda(self.run) and use is not None and use > MAX_MEMORY_FOR_4X:
            self.run.whatif.skipped.append(
                f"larger batch: the run peaked at {use:.0%} of the GPU's memory, 4x the batch's "
                "activations might not fit beside it"
            )
            return
        factors = factors_that_fit(self.run.memory)
        if not factors:
            self.run.whatif.skipped.append(
                "larger batch: 2x the batch's saved activations would not fit in the memory left "
                "beside the run's peak"
            )
            return
        batch = round(bound.micro_batch)
        stake = _run_share(self.run, "forward") + _run_share(self.run, "backward")

        def measure(replay: Replay, allowance: float) -> list[WhatIfTiming]:
            if sequence_first(replay.model):
                self.run.whatif.skipped.append(
                    "larger batch: the model has a recurrent or transformer layer with "
                    "batch_first=False, so the inputs' first dimension is not the batch"
                )
                return []
            seen = replay_batch(replay)
            # the replayed forward may be an epoch's short last batch, a little off the typical
            # one; a sequence-first input is another dimension altogether
            if seen is None or abs(seen - batch) > BATCH_TOLERANCE * batch:
                self.run.whatif.skipped.append(
                    f"larger batch: the forward kept for the replay had {seen} samples in its "
                    f"first input dimension, not the training batch of {batch}"
                )
                return []
            return measure_batch(replay, seen, allowance, factors)

        self.items.append((stake, "larger batch", self._replayed(measure)))
        self.fewest_rounds_s("larger batch", *[FORWARD_BACKWARD] * (1 + len(factors)))
        if not bound.overhead.trivial:  # only this measurement can make D202 fire
            # its warm-up and fewest rounds: the batch as run and each factor's, at k times
            # the steps' forward and backward
            per_round = (1 + sum(factors)) * _median_phases_s(self.run, *FORWARD_BACKWARD)
            self.raise_only["larger batch"] = (1 + MIN_ROUNDS) * per_round

    def _plan_padded_dims(self) -> None:
        """Linear sizes padded to multiples of 8: timed on CUDA under autocast only (rule D208's
        case; tensor cores are what the padding serves)."""
        from torchdoctor.diagnose.rules._common import on_cuda, uses_autocast
        from torchdoctor.diagnose.whatif.padded_dims import measure_padded

        run = self.run
        stake = _run_share(run, "forward") + _run_share(run, "backward")
        unaligned = any(m.dims_not_multiple_of_8 for m in run.models)
        if not (on_cuda(run) and uses_autocast(run) and unaligned) or stake < MIN_PHASE_SHARE:
            return
        autocast = run.precision.autocast_dtype
        self.items.append(
            (
                stake,
                "Linear sizes padded to multiples of 8",
                self._replayed(
                    lambda replay, allowance: measure_padded(replay, autocast, allowance)
                ),
            )
        )

    def _plan_copies(self) -> None:
        """Pinned, non-blocking host-to-device copies: timed on CUDA only (a CPU run copies to
        no device, and rules D104/D402 are silent there)."""
        from torchdoctor.diagnose.rules._common import on_cuda, training_loaders
        from torchdoctor.diagnose.whatif.pinned_copy import case_for, measure_copies

        share = _run_share(self.run, "h2d")
        if not on_cuda(self.run) or share < MIN_PHASE_SHARE:
            return
        t = self.run.transfers
        unpinned = any(not ld.pin_memory for ld in training_loaders(self.run))
        case = case_for(t.pinned_fraction, t.non_blocking_fraction, unpinned)
        if case is None:
            return
        self.items.append(
            (
                share,
                "pinned non-blocking copies",
                self._replayed(lambda replay, allowance: measure_copies(replay, case, allowance)),
            )
        )

    def _plan_cuda(self) -> None:
        """cudnn.benchmark, TF32 and channels_last: timed on CUDA only (flags of its backends)."""
        from torchdoctor.diagnose.rules._common import conv_layers, on_cuda, uses_autocast
        from torchdoctor.diagnose.whatif.precision import (
            measure_channels_last,
            measure_cuda_backends,
        )

        run, env = self.run, self.run.environment
        stake = _run_share(run, "forward") + _run_share(run, "backward")
        if not on_cuda(run) or stake < MIN_PHASE_SHARE:
            return
        autocast = run.precision.autocast_dtype if uses_autocast(run) else None
        convs = conv_layers(run) > 0
        benchmark = convs and env.cudnn_benchmark is False and env.input_shapes_fixed is True
        ampere = env.compute_capability is not None and tuple(env.compute_capability) >= (8, 0)
        tf32 = ampere and env.tf32_matmul is False and autocast is None
        if benchmark or tf32:
            self.items.append(
                (
                    stake,
                    "cuDNN benchmark / TF32",
                    self._replayed(
                        lambda replay, allowance: measure_cuda_backends(
                            replay, autocast, benchmark, tf32, allowance
                        )
                    ),
                )
            )
        nchw = any(m.conv_layers and m.conv_channels_last_inputs is False for m in run.models)
        if convs and autocast and nchw:
            self.items.append(
                (
                    stake,
                    "channels_last",
                    self._replayed(
                        lambda replay, allowance: measure_channels_last(replay, autocast, allowance)
                    ),
                )
            )


NOT_RUN_FROM_A_THREAD = (
    "what-if probes not run: the report was made in a thread of the program's (os._exit there) "
    "while its main thread still ran the program, which changes the objects they copy; the "
    "savings are estimates"
)


def run_whatifs(session, run: RunObservation, budget_s: float | None = None) -> None:
    """Fill `run.whatif`; `budget_s` None: WHATIF_SHARE of the time since the diagnosis began."""
    if run.warmup_only or not run.steps or run.distributed is not None:
        return
    main = threading.main_thread()
    if threading.current_thread() is not main and main.is_alive():
        # os._exit from a thread of the program's: its main thread still runs the program and
        # changes the objects the what-ifs would copy (cloning an optimizer that thread was
        # stepping crashed the process, 1 run in ~20)
        run.notes.append(NOT_RUN_FROM_A_THREAD)
        return
    tracker = session.tracker
    seconds = (
        budget_s if budget_s is not None else WHATIF_SHARE * (tracker.clock() - tracker.origin)
    )
    whatif = run.whatif
    whatif.budget_s = seconds
    raised = False
    plan = _Plan(session, run)
    _import_rules()
    started = time.perf_counter()
    try:
        with program_state_kept():
            budget = Budget(seconds)  # the planning counts: whatif.seconds stays within it
            with budget.active():
                _build(plan)
                if budget_s is None:
                    diagnosed_s = tracker.clock() - tracker.origin
                    budget.seconds = _raised(plan, budget, SHORT_RUN_SHARE * diagnosed_s)
                    raised = budget.seconds > seconds
                    whatif.budget_s = budget.seconds
                _run_plan(plan, budget)
    finally:
        whatif.seconds = time.perf_counter() - started
    if whatif.timings or whatif.skipped:
        run.notes.append(_summary(run, _raised_labels(plan) if raised else []))


def _raised(plan: _Plan, budget: Budget, most_s: float) -> float:
    """The budget, raised (to at most `most_s`) to what is spent plus the floors of the
    RAISED_FOR probes that were planned, where they do not fit."""
    floors_of = _raise_floors(plan)
    floors = [floors_of[label] for label in _raised_labels(plan)]
    if not floors:
        return budget.seconds
    return max(budget.seconds, min(most_s, budget.spent + sum(floors)))


def _raise_floors(plan: _Plan) -> dict[str, float]:
    return {**plan.floors, **plan.raise_only}


def _raised_labels(plan: _Plan) -> list[str]:
    """The RAISED_FOR probes planned with a floor: those a short run's budget is raised for."""
    planned, floors_of = {label for _, label, _ in plan.items}, _raise_floors(plan)
    return [label for label in RAISED_FOR if label in planned and label in floors_of]


# the probe modules the plan imports: their import is not the probes' time
PROBE_MODULES = (
    "anomaly", "batch", "batched_fetch", "collate", "data", "evaluation", "optimizer",
    "padded_dims", "pinned_copy", "precision", "profiler", "respawn",
)  # fmt: skip


def _import_rules() -> None:
    """Import the rule modules the plan reads (the rules' thresholds) and the probes' modules
    before the what-if clock starts: the report imports the rules anyway, and they took half of
    a 0.3 s budget; the probes' modules took 0.2 s at load, all of d211's 0.3 s budget before
    the anomaly probe began (D211 stated an estimate)."""
    import importlib

    from torchdoctor.diagnose.rules_runner import load_rules

    try:
        load_rules()
    except Exception:  # noqa: BLE001 - the rules runner reports a rule that fails to import
        pass
    for name in PROBE_MODULES:
        importlib.import_module(f"{__name__}.{name}")


def _run_plan(plan: _Plan, budget: Budget) -> None:
    """Each planned probe in turn while the budget lasts; what does not fit is skipped, said."""
    whatif, seconds = plan.run.whatif, budget.seconds
    for index, (_, label, work) in enumerate(plan.items):
        # an equal share of what is left after the later probes' floors (the least each is
        # predicted to take); a probe may go over its share for the fewest rounds it needs,
        # never over the budget (guard.OverBudget), so the probes with the largest stakes,
        # first, are the last to go unmeasured
        later = _reserved(plan, index, budget.left)
        share = max(0.0, budget.left - later) / (len(plan.items) - index)
        allowance = max(share, plan.floors.get(label, 0.0))
        if budget.left < MIN_ALLOWANCE_S:
            whatif.skipped.append(f"{label}: over the time budget ({seconds:.1f} s)")
            continue
        least = plan.least.get(label, 0.0)
        room = budget.left - later
        if least > room:  # not begun: its warm-up alone would be paid for nothing
            whatif.skipped.append(
                f"{label}: over the time budget ({seconds:.1f} s): its warm-up and fewest "
                f"rounds would take about {least:.2f} s at the steps' times, "
                f"{room:.2f} s left" + (" beside the later probes' least" if later else "")
            )
            continue
        try:
            # its rounds refuse where they would eat into the later probes' floors: a probe
            # may go over its share, not over what the probes without a stand-in need (d302:
            # the larger-batch probe's 1x, 2x and 4x batches spent a 0.53 s budget, the
            # evaluation forward was never timed, and D302 stated 0% (estimated) where
            # `--try eval_mode` gained 16%)
            with Budget(room, budget.clock).active() if later else nullcontext():
                whatif.timings.extend(work(allowance))
        except OverBudget as exc:
            whatif.skipped.append(f"{label}: over the time budget ({seconds:.1f} s): {exc}")
        except Exception as exc:  # a program's object we cannot replay: skip, say so
            whatif.skipped.append(f"{label}: {type(exc).__name__}: {exc}".splitlines()[0])


def _reserved(plan: _Plan, index: int, left: float) -> float:
    """The floors of the probes after `index`, in order, as far as they fit in `left` together
    (a probe that cannot fit anyway is not waited for)."""
    reserved = 0.0
    for _, label, _ in plan.items[index + 1 :]:
        floor = plan.floors.get(label, 0.0)
        if reserved + floor <= left:
            reserved += floor
    return reserved


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


def _summary(run: RunObservation, raised: list[str]) -> str:
    whatif = run.whatif
    words = (
        f"what-if probes: {len(whatif.timings)} fix(es) timed on copies of the program's objects "
        f"in {whatif.seconds:.1f} s (budget {whatif.budget_s:.1f} s, {WHATIF_SHARE:.0%} of the "
        "diagnosed time"
        + (f", raised for the {' and '.join(raised)} what-if(s) on a short run)" if raised else ")")
    )
    if whatif.skipped:
        words += "; not measured: " + "; ".join(whatif.skipped)
    return words
