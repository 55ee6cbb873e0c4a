"""One diagnosis: the probes, the step tracker and the decision when to stop the script.

Step layout for `--warmup W --steps N`: steps 0..W-1 are warm-up (the last of them is the sampled
step where ops and FLOPs are counted, which slows it down), steps W..W+N-1 are measured, then the
script is stopped by raising `StopDiagnosis` from the hook that closed the last step (one step
later when the last step's forwards still wait for a gradient, see steps.py). At least two
steps stay out of the measurement whatever W is: the sampling modes are entered at the end of a
step, so the sampled step cannot be the first one.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.utils.data import Subset

from torchdoctor.diagnose.insist import StopInsister
from torchdoctor.diagnose.optimizer_cycle import OptimizerCycle
from torchdoctor.diagnose.probes.profiler import WINDOW as PROFILE_WINDOW
from torchdoctor.diagnose.rank_stop import RankStop, grouped
from torchdoctor.diagnose.steps import StepRecord, StepTracker
from torchdoctor.intercept.hooks import Hooks
from torchdoctor.intercept.patching import Patcher
from torchdoctor.intercept.warning_source import WarningSource

MIN_CYCLE_STEPS = 3  # whole-cycle mode measures at least this many steps, budget or not
# Whole-cycle mode with no epoch of known length (batches sliced from tensors, a generator): an
# evaluation ends the cycle; it is waited for up to this many steps or this share of the budget
UNKNOWN_EPOCH_MAX_STEPS = 200
UNKNOWN_EPOCH_BUDGET_SHARE = 0.5
# An evaluation forward after the budget stops the program once MIN_CYCLE_STEPS were measured, or
# regardless once this many budgets have passed (no step may ever close before a long evaluation)
EVALUATION_HARD_BUDGETS = 2.0


class StopDiagnosis(BaseException):
    """Raised from a hook once enough steps were measured; BaseException, so `except Exception`
    in the user's loop does not swallow it."""


@dataclass
class DiagnoseConfig:
    steps: int = 20  # measured steps; 0: let the script finish
    warmup: int = 3
    profile: bool = False  # run a torch.profiler window over a few unmeasured steps
    stop: bool = True  # raise StopDiagnosis after `steps` measured steps
    count_ops: bool = True  # one warm-up step counts ops and FLOPs (a trial has no use for it)
    max_kept_steps: int = 10_000  # only the latest measured steps are kept (memory stays bounded)
    line_profile: bool = True  # sample the training thread's stack (run.lines; probes/lines.py)
    # probe classes left out by name: what each probe costs (bench/diagnose_overhead.py
    # --per-probe); a diagnosis never sets it (the observations of a left-out probe stay empty;
    # without BackwardProbe, the memory and habits probes' backward listeners go with it)
    without_probes: tuple[str, ...] = ()
    # whole-cycle mode (steps=0): measure at least `min_steps`, then until the first step of the
    # next training epoch (the evaluation and checkpoints between epochs seen), within budget_s
    cycle: bool = False
    min_steps: int = 20
    budget_s: float = 60.0  # wall seconds since the first measured step began
    whatif: bool = True  # time the fixes on copies after the run (diagnose/whatif)
    whatif_budget_s: float | None = None  # None: 10% of the diagnosed wall time


class Session:
    def __init__(self, config: DiagnoseConfig | None = None, hooks: Hooks | None = None):
        from torchdoctor.diagnose.probes import make_probes

        self.config = config or DiagnoseConfig()
        # the hook points run-time fixes act through: the probes call them from their patches
        self.hooks = hooks or Hooks()
        self.tracker = StepTracker(max_kept=self.config.max_kept_steps)
        self.patcher = Patcher()
        self.warning_source = WarningSource()  # torch's warnings through our wrappers: theirs
        self.first_measured = max(self.config.warmup, 2)
        self.sampled_index = self.first_measured - 1
        self.profile_start = self._place_profile_window()
        self.optimizers_created = 0  # torch.optim optimizers constructed while we watched
        self.optimizer_stepped = False
        self.step_in_one_graph = False  # an optimizer step compiled into one graph (no hook runs)
        self.scaler_depth = 0  # inside GradScaler.step: the step ends when it returns
        self.optimizer_cycle = OptimizerCycle()  # several optimizers per iteration: one step
        self.stopped = False
        self.stdout_mid_line = False  # the program's last print() to our stdout left a line open
        self.compiled_model_seen = False  # a torch.compile'd root model was called
        self.last_model = None  # the last root model called: its train mode votes loader roles
        self.unscaled_loss = None  # (scaled tensor, loss) from the last GradScaler.scale()
        self.formatting_tensor = False  # inside Tensor.__format__/__repr__ (io probe sets it)
        # weak references to the tensors of the batch the DataLoader yielded last (loader probe):
        # a host read of one is the data pipeline's, no sync on a GPU either (sync probe)
        self.loader_batch: list = []
        self.installed = False
        self.epoch_starts: list[int] = []  # step index at each training loader's iter()
        # the dataset (id) each of epoch_starts iterates: a loader rebuilt every epoch over one
        # dataset is the same loop; a dataset not iterated before is another stage's
        self.epoch_datasets: list[int] = []
        self.epoch_length: int | None = None  # len() of the training loader, when it has one
        # the datasets (ids, as the loaders hold them: a split's Subset is its own) that began a
        # training epoch
        self._training_datasets: set[int] = set()
        self.stop_reason = ""  # why whole-cycle mode stopped, in words (a note)
        self.deferred_stop = ""  # a whole-cycle stop found while a step's forwards were unjudged
        self.rank_stop = RankStop()  # whole-cycle stops wait for the other ranks (torchrun)
        self._budget_start: float | None = None  # when the first measured step began (clock)
        self.insister = StopInsister(StopDiagnosis)
        # ids of the frames that called diagnose_script (alive while the program runs): not the
        # program's code, whatever file they are in (a test function named test_* in pytest)
        self.caller_frames: frozenset[int] = frozenset()
        self.probes = make_probes(self)
        self._step_listeners: list = []  # chosen at install: a probe may know then it is idle
        self.tracker.on_step_end.append(self._after_step)

    def _place_profile_window(self) -> int | None:
        """Index of the first `--profile` step. The profiler slows the steps it covers and its
        teardown lands in the step after them, so neither is measured: the window runs after
        the measured steps (then the program is stopped), or, when the program runs to its end
        (--steps 0), right after warm-up, the measurement starting one step after it."""
        if not self.config.profile:
            return None
        if self.config.steps and self.config.stop:
            return self.first_measured + self.config.steps
        start = self.first_measured
        self.first_measured += PROFILE_WINDOW + 1
        return start

    # -- lifecycle ----------------------------------------------------------------------------
    def install(self) -> None:
        for probe in self.probes:
            probe.install(self.patcher)
        self.warning_source.install()
        self._step_listeners = [p for p in self.probes if p.reacts_to_steps()]
        self.installed = True

    def uninstall(self) -> None:
        self.insister.release()
        if self.installed:
            self.tracker.close(cut_short=self.stopped)
            for probe in self.probes:
                probe.stop()
            self.patcher.restore()
            self.warning_source.restore()
            self.installed = False

    def program_crashed(self, exc: BaseException) -> None:
        """The program raised (its traceback still holds its frames): probes may look."""
        for probe in self.probes:
            probe.on_crash(exc)

    # -- step boundaries (called by the probes) -----------------------------------------------
    @property
    def measuring(self) -> bool:
        # asked by the probes at every host read they record (an RL loop: one per action)
        index = self.tracker.index
        if index < self.first_measured or self.stopped:
            return False
        steps = self.config.steps
        return not steps or index < self.first_measured + steps

    def measured_steps(self) -> list[StepRecord]:
        steps = self.tracker.steps[max(0, self.first_measured - self.tracker.dropped) :]
        if self.config.steps:
            steps = steps[: self.config.steps]
        return steps[-self.config.max_kept_steps :]

    def optimizer_step_done(self, optimizer) -> None:
        if not self.optimizer_stepped and self.tracker.steps and not self.optimizers_created:
            # An optimizer built before we were installed (watch()) just stepped for the first
            # time: the steps we closed at backward() were mis-delimited; start counting again.
            self.tracker.forget_steps()
        self.optimizer_stepped = True
        if not self.scaler_depth:  # inside GradScaler.step, the step ends when that returns
            self._update_done(optimizer)

    def scaler_step_done(self, optimizer) -> None:
        """GradScaler.step returned: the step ends even when it skipped optimizer.step (inf)."""
        self.optimizer_stepped = True  # also when it skipped the update on overflow
        self._update_done(optimizer)

    def _update_done(self, optimizer) -> None:
        """The step ends at the last optimizer of the iteration's cycle (optimizer_cycle.py)."""
        self.tracker.parameters_updated()
        if self.optimizer_cycle.stepped(id(optimizer)):
            self.tracker.end_step()

    def data_fetch_started(self) -> None:
        """A DataLoader `next()` begins: an iteration boundary for the optimizer cycle."""
        if self.optimizer_stepped and self.optimizer_cycle.iteration_ended():
            self.tracker.end_step()  # the cycle changed: its optimizer steps closed no step

    def optimizer_step_in_one_graph(self) -> None:
        """Dynamo inlines an optimizer's step into a graph compiled with `fullgraph=True`: that
        step runs no hook of ours, every time the graph runs."""
        self.step_in_one_graph = True

    def backward_done(self) -> None:
        if self.optimizer_stepped:
            return
        if not self.optimizers_created or self.step_in_one_graph:
            self.tracker.end_step()  # parameters updated by hand, or by a step we cannot see

    def loader_iter_started(self, loader) -> None:
        """A DataLoader epoch begins; in a training context it is a training epoch boundary, and
        so is a loader over a dataset that began one before, iterated again with autograd on
        while the model is still in eval mode: a program that calls `model.train()` inside its
        loop, after the fetch, left eval mode on from its evaluation (DKT: no epoch boundary
        was seen and whole-cycle mode ran its 60 s budget over 3-step epochs)."""
        fed = getattr(loader, "dataset", loader)
        if not self.training_context():
            if not (torch.is_grad_enabled() and id(fed) in self._training_datasets):
                return
        self._training_datasets.add(id(fed))
        self.epoch_starts.append(self.tracker.index)
        dataset = fed
        while isinstance(dataset, Subset):  # a curriculum's new pool of one dataset: same loop
            dataset = dataset.dataset
        self.epoch_datasets.append(id(dataset))
        try:
            self.epoch_length = len(loader)
        except TypeError:  # an IterableDataset without a length
            self.epoch_length = None

    def training_context(self) -> bool:
        """Autograd on and the last root model (if any yet) in train mode: data fetched now is
        for training."""
        model = self.last_model
        return torch.is_grad_enabled() and (model is None or model.training)

    def measured_count(self) -> int:
        return max(0, self.tracker.index - self.first_measured)

    def _after_step(self, record: StepRecord) -> None:
        for probe in self._step_listeners:
            probe.on_step_end(record)
        bounded = self.config.steps or self.config.cycle
        if self.config.stop and bounded and (self.stopped or self._stop_now()):
            self.stop_program()

    def evaluation_forward_starting(self) -> None:
        """Whole-cycle mode: an evaluation forward (autograd off) is about to run after the budget
        ran out: stop here (before MIN_CYCLE_STEPS measured steps, only at twice the budget since
        the diagnosis began, start-up included). The
        cycle is judged at step ends, and a program that evaluates for minutes before its first
        step (nanoGPT-style loss estimates over hundreds of batches) or inside one would
        otherwise run past any budget with no report."""
        if not (self.config.cycle and self.config.stop) or self.config.steps or self.stopped:
            return
        count = self.measured_count()
        if count >= MIN_CYCLE_STEPS:
            over = self._budget_elapsed() > self.config.budget_s
        else:  # e.g. before the first step: counted from the diagnosis's start
            elapsed = self.tracker.clock() - self.tracker.origin
            over = elapsed > EVALUATION_HARD_BUDGETS * self.config.budget_s
        if not over:
            return
        reason = (
            # a forward without autograd: an evaluation's, or one inside the training step (a
            # target network's, a teacher's: BYOL's target forwards, every step)
            f"the --budget of {self.config.budget_s:g} s ran out, at a forward without autograd, "
            f"after {count} measured step{'' if count == 1 else 's'} (a longer --budget, or "
            "--steps N, measures past it)"
        )
        if grouped():  # the ranks agree at a step end; this one may be evaluating alone
            self.rank_stop.want(reason)
            return
        self.stop_reason = reason
        self.stop_program()

    def stop_program(self) -> None:
        """Stop the program now (from a hook in its call stack): StopDiagnosis, and if the
        program caught an earlier one, the insister makes this one stick."""
        if self.stopped:
            self.insister.insist()
        self.stopped = True
        raise StopDiagnosis

    def _stop_now(self) -> bool:
        if self.config.steps:
            return self._enough_steps()
        if self.tracker.unsettled is None or self.deferred_stop:
            reason = self.deferred_stop or self._cycle_done()
            if reason:
                self.rank_stop.want(reason)
        elif not grouped():
            # its forwards are judged one step later (ranks: at the agreement), so a reason found
            # now stops at the next step end, judged or not: a program whose every step leaves a
            # forward without gradient (an RNN cell's unused outputs) ran past any --budget
            self.deferred_stop = self._cycle_done()
            return False
        if not self.rank_stop.agreed(self.tracker.index):
            return False
        self.stop_reason = self.rank_stop.wanted or "another rank's whole cycle was measured"
        return True

    def _budget_elapsed(self) -> float:
        """Seconds of --budget spent: since the first measured step began. The program's start-up
        (imports, data, model) and the warm-up steps are its own time, not the measurement's:
        counted from the session's start, a start-up of 3 s left `--budget 5` 3 measured steps
        at load (round 11)."""
        if self._budget_start is None:
            at = self.first_measured - self.tracker.dropped
            if self.measured_count() == 0 or not 0 <= at < len(self.tracker.steps):
                return 0.0
            self._budget_start = self.tracker.origin + self.tracker.steps[at].start
        return self.tracker.clock() - self._budget_start

    def _cycle_done(self) -> str:
        """Whole-cycle mode: why to stop now ("" to go on)."""
        count = self.measured_count()
        elapsed = self._budget_elapsed()
        over_budget = elapsed > self.config.budget_s
        if count < self.config.min_steps:
            if over_budget and count >= MIN_CYCLE_STEPS:
                # no count here: the stop can come a step later (a forward judged at the next
                # step's end), and the notes say how many steps were measured
                return (
                    f"the --budget of {self.config.budget_s:g} s ran out before "
                    f"{self.config.min_steps} steps were measured"
                )
            return ""
        index = self.tracker.index  # the step about to start; index - 1 just closed
        boundaries = [i for i in self.epoch_starts if i > self.first_measured]
        stage = bool(boundaries) and self._new_stage(boundaries[0])
        if stage and index - 1 > boundaries[0]:
            return (
                f"the measured loop ended: at step {boundaries[0]} a DataLoader over a "
                "dataset not iterated before began to feed the steps (another training "
                f"stage, not measured: rerun with --warmup {boundaries[0] + 2} to measure it)"
            )
        if stage:
            return ""  # a step it feeds tells (an evaluation loop's loader feeds none)
        if boundaries and index - 1 > boundaries[0]:
            return (
                f"a whole cycle was measured: a new training epoch began at step "
                f"{boundaries[0]}, after what runs between epochs (evaluation, checkpoints)"
            )
        if over_budget:
            return f"the --budget of {self.config.budget_s:g} s ran out before a whole epoch"
        if not self.epoch_starts or not self.epoch_length:
            return self._cycle_without_epochs_done(count, elapsed)
        epoch_end = self.epoch_starts[-1] + self.epoch_length
        per_step = elapsed / count  # evaluation and checkpoints included
        if elapsed + (epoch_end - index + 1) * per_step > self.config.budget_s:
            return (
                f"the next epoch starts at step {epoch_end}, beyond the --budget of "
                f"{self.config.budget_s:g} s: measured {count} steps"
            )
        return ""

    def _new_stage(self, boundary: int) -> bool:
        """The epoch starting at `boundary` is the first over its dataset: the measured steps
        before it were fed otherwise, by a pipeline's earlier stage (pretrain, then fine-tune),
        and this is not the measured loop's next epoch."""
        # the last loader started at that step is the one feeding it (a validation loader
        # iterated in train mode with autograd on may have started just before)
        at = len(self.epoch_starts) - 1 - self.epoch_starts[::-1].index(boundary)
        return self.epoch_datasets[at] not in self.epoch_datasets[:at]

    def _cycle_without_epochs_done(self, count: int, elapsed: float) -> str:
        """No DataLoader epoch to wait for: an evaluation (the usual end of an epoch) ends the
        cycle; without one, stop after UNKNOWN_EPOCH_MAX_STEPS or a share of the budget."""
        if self.tracker.eval_forwards:
            return (
                f"a whole cycle was measured: {count} steps and an evaluation (no DataLoader "
                "epoch to wait for)"
            )
        waited_enough = elapsed > UNKNOWN_EPOCH_BUDGET_SHARE * self.config.budget_s
        if count >= UNKNOWN_EPOCH_MAX_STEPS or waited_enough:
            return (
                f"{count} steps measured: no training epoch of known length and no evaluation "
                "to wait for (use --steps N to measure more)"
            )
        return ""

    def _enough_steps(self) -> bool:
        """All measured steps closed, and the last one's forwards judged: while some may still
        get their gradient (a GAN's generator output), one more unmeasured step runs to decide."""
        count = self.measured_count()
        if self.profile_start is not None and self.profile_start > self.first_measured:
            count -= PROFILE_WINDOW  # the profiled steps after the measured ones ran too
        if count == self.config.steps:
            return self.tracker.unsettled is None
        return count > self.config.steps
