"""One analysis of the measured steps, shared by the rules and the report.

Which steps count, which are outliers, the mean profile per phase, the breakdown shares, the
median step and the evaluation share are defined here once: a rule's saving and the report's
breakdown are drawn from the same steps. Pure (no torch); the results are data, and the words
about them (the spread note) are written by the report's prose module.
"""

from __future__ import annotations

from dataclasses import dataclass

from torchdoctor.diagnose.observations import PHASES, RunObservation, StepObservation

# A step slower than this many times the median is an outlier (another process took the CPU, a
# garbage collection, an epoch's worker start-up, a one-off checkpoint). Outliers are left out of
# the profile and the breakdown while they are rare (at most RARE_SHARE of the steps): otherwise
# they are how the loop behaves, and count. The rules about such spikes (D103 worker start-up)
# measure them on their own.
OUTLIER_FACTOR = 3.0
RARE_SHARE = 0.25
# A slow step that did more work than the median step (more input elements: bucketed text's long
# batches; or more ops dispatched) is how the program runs, not a preemption: its bound grows
# with its work, squared (attention's time grows with the square of the sequence length).
WORK_POWER = 2.0
COMPUTE_PHASES = ("forward", "backward", "optimizer")
# Evaluation forwards outside the measured steps that can still be an RL loop's acting: a
# rollout's worth (a few predictions after the training loop are not)
ACTING_FORWARDS = 16


def median(values: list[float]) -> float:
    ordered = sorted(values)
    n = len(ordered)
    if n == 0:
        return 0.0
    mid = n // 2
    return ordered[mid] if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def typical_batch(steps: list[StepObservation]) -> int | None:
    """The batch the program trains on, from the samples its steps consumed: the upper median,
    a size some step had. Never the mean: an epoch's short last batch (drop_last=False) pulls
    it down (186 batches of 256 and one of 128 read 255, and D202 proposed batch_size=1020),
    and a batch_sampler's varying sizes are no one size at all. None: no step said."""
    sizes = sorted(s.batch_size for s in steps if s.batch_size)
    return sizes[len(sizes) // 2] if sizes else None


def clamp(x: float, lo: float = 0.0, hi: float = 1.0) -> float:
    return max(lo, min(hi, x))


def measured_steps(run: RunObservation) -> list[StepObservation]:
    """The timed measured steps; none when the run ended within warm-up: warm-up steps carry
    start-up costs and evaluation-only syncs, so nothing per step is drawn from them."""
    if run.warmup_only:
        return []
    return [s for s in run.steps if s.wall_s > 0]


@dataclass(frozen=True)
class StepProfile:
    """Mean seconds per typical step, in total and per phase."""

    steps: int
    step_s: float
    phase_s: dict[str, float]

    def seconds(self, *phases: str) -> float:
        return sum(self.phase_s.get(p, 0.0) for p in phases)

    def share(self, *phases: str) -> float:
        """Share of step time spent in the given phases (0..1)."""
        return clamp(self.seconds(*phases) / self.step_s) if self.step_s > 0 else 0.0

    @property
    def compute_s(self) -> float:
        return self.seconds(*COMPUTE_PHASES)


@dataclass(frozen=True)
class StepSpread:
    """Steps over OUTLIER_FACTOR x the median step."""

    outliers: int
    steps: int
    slowest_s: float
    median_s: float
    compiled_steps: tuple[int, ...]  # outlier steps in which torch.compile compiled new code
    left_out: bool  # rare enough to be left out of the profile and the breakdown

    @property
    def all_compiled(self) -> bool:
        """Every outlier has a known cause (a compilation), no guess needed."""
        return len(self.compiled_steps) == self.outliers


@dataclass(frozen=True)
class StepAnalysis:
    measured: list[StepObservation]  # timed measured steps
    typical: list[StepObservation]  # the steps the profile and the breakdown are drawn from
    median_step_s: float
    spread: StepSpread | None  # None: no outlier
    evaluation_share: float

    @property
    def profile(self) -> StepProfile | None:
        """Mean per phase: a mean keeps the costs paid every few steps."""
        n = len(self.typical)
        if not n:
            return None
        phase_s = {p: sum(s.phases.get(p, 0.0) for s in self.typical) / n for p in PHASES}
        return StepProfile(n, sum(s.wall_s for s in self.typical) / n, phase_s)

    @property
    def breakdown(self) -> dict[str, float]:
        """Share of the typical steps' time by phase (sums to 1 when phases cover the step)."""
        total = sum(s.wall_s for s in self.typical)
        if total <= 0:
            return {}
        return {p: sum(s.phases.get(p, 0.0) for s in self.typical) / total for p in PHASES}


def _work_ratio(step: StepObservation, median_elements: float, median_ops: float) -> float:
    """How many times the median step's work the step did (at least 1): by its training input's
    elements, or by the ops it dispatched, whichever is larger; 1 when neither was seen."""
    ratio = 1.0
    if step.training_input_elements and median_elements > 0:
        ratio = max(ratio, step.training_input_elements / median_elements)
    if step.ops and median_ops > 0:
        ratio = max(ratio, step.ops / median_ops)
    return ratio


def _outliers(steps: list[StepObservation], median_s: float) -> list[StepObservation]:
    """Steps over OUTLIER_FACTOR x the median step, beyond what their own work explains."""
    slow = [s for s in steps if s.wall_s > OUTLIER_FACTOR * median_s]
    if not slow:
        return slow
    median_elements = median([float(s.training_input_elements or 0) for s in steps])
    median_ops = median([float(s.ops or 0) for s in steps])
    return [
        s
        for s in slow
        if s.wall_s
        > OUTLIER_FACTOR * median_s * _work_ratio(s, median_elements, median_ops) ** WORK_POWER
    ]


def _spread(steps: list[StepObservation], median_s: float) -> tuple[list, StepSpread | None]:
    outliers = _outliers(steps, median_s)
    if not outliers or median_s <= 0:
        return steps, None
    left_out = {id(s) for s in outliers}
    rare = len(outliers) <= RARE_SHARE * len(steps)
    spread = StepSpread(
        outliers=len(outliers),
        steps=len(steps),
        slowest_s=max(s.wall_s for s in outliers),
        median_s=median_s,
        compiled_steps=tuple(s.index for s in outliers if s.compiles),
        left_out=rare,
    )
    typical = [s for s in steps if id(s) not in left_out] if rare else steps
    return typical, spread


def evaluation_share(run: RunObservation, measured_only: bool = False) -> float:
    """Evaluation time as a share of evaluation plus training time.

    Prefers the evaluation cut out of the measured steps (same window as the training time).
    Where none was (a GAN's sampler at batch 0, minGPT's evaluation at iteration 0), all the
    evaluation seen is compared with all the training seen, warm-up included, but only in a run
    that completed. Of a run stopped or ended early whose evaluation ran outside the measured
    steps, or once in the first half of them (a sampler every 100 batches seen once in a window
    of four steps), how often it runs is unknown: the share is 0, none is stated
    (`evaluation_frequency_unknown`). `measured_only`: the measured steps' evaluation alone, as
    seen (what the verdict says of "the measured time").
    """
    steps = measured_steps(run)
    if not steps:  # no measured training time to compare with
        return 0.0
    train_s = sum(s.wall_s for s in steps)
    eval_s = sum(s.evaluation_s for s in steps)
    if not measured_only:
        if evaluation_frequency_unknown(run):
            return 0.0
        if not eval_s and run.status == "completed":
            eval_s = run.evaluation.seconds
            train_s = max(train_s, run.training_s_seen)
    return clamp(eval_s / (eval_s + train_s)) if eval_s > 0 else 0.0


def evaluation_frequency_unknown(run: RunObservation) -> bool:
    """Evaluation ran in a run that did not complete, outside the measured steps or in a single
    one of them in the window's first half (CycleGAN's sampling at batch 0, then no more): how
    often it runs is unknown (it may run once an epoch of hundreds of steps), so no share of the
    run's time (nor a saving) is drawn from it. Seen in two measured steps or more, it has a
    period; seen once late in the window, the window ended soon after it (whole-cycle mode
    measures up to the evaluation after an epoch and the next epoch's first step)."""
    if run.evaluation.seconds <= 0 or run.status == "completed":
        return False
    steps = measured_steps(run)
    with_evaluation = [i for i, s in enumerate(steps) if s.evaluation_s > 0]
    if not with_evaluation:
        return True
    # seen once, in the window's first half: the rest of it ran without, for how long unknown
    return len(with_evaluation) == 1 and with_evaluation[0] < (len(steps) - 1) / 2


def evaluation_is_validation(run: RunObservation) -> bool:
    """Evaluation forwards that are validation: mostly in eval mode, or fed by an evaluation
    loader (an RL loop's acting forwards, or a metric forward, run in train mode)."""
    evaluation = run.evaluation
    # a GAN generator's samples ran in train mode too (left out of in_train_mode for D302)
    eval_mode = evaluation.forwards - evaluation.in_train_mode - evaluation.generator_samples
    return eval_mode * 2 >= evaluation.forwards or any(ld.role == "eval" for ld in run.loaders)


def acts_in_the_loop(run: RunObservation) -> bool:
    """The evaluation forwards are an RL loop's acting: not validation, and most of them did not
    run on a batch a training forward had seen (the policy acts on what the environment
    returned). A few may have: an update's own no-grad forward on its replay batch (SAC's
    entropy-coefficient target, `actor.get_action(data.observations)` under no_grad) is
    part of the update, not a metric; a second forward for a metric runs on every batch.
    Acting is a loop: some of it was cut out of the measured steps, between updates, or it ran
    at least a rollout's ACTING_FORWARDS (a rollout between the measured steps: fabric's PPO
    collects 128 steps of 2 environments before its updates and after them). A prediction
    after the training loop (a demo on one input, a scripted model's check) runs in no step and
    acts on nothing."""
    evaluation = run.evaluation
    on_training = evaluation.on_training_batches
    return (
        evaluation.forwards > 0
        and on_training is not None
        and on_training * 2 < evaluation.forwards
        and not evaluation_is_validation(run)
        and (
            evaluation.forwards >= ACTING_FORWARDS
            or any(s.evaluation_s > 0 for s in measured_steps(run))
        )
    )


def evaluation_is_acting(run: RunObservation) -> bool:
    """What the report calls the evaluation forwards' time: an RL loop's acting, part of its
    training, where the forwards act in the loop (above), are not mostly a GAN generator's samples,
    and ran on fewer rows than the training forwards: one observation per environment, against
    a batch drawn from the rollout or a replay buffer. A held-out set evaluated in train mode
    without a loader runs at least a training batch at once, and stays "evaluation"."""
    evaluation = run.evaluation
    if not acts_in_the_loop(run) or evaluation.generator_samples * 2 >= evaluation.forwards:
        return False
    rows = [float(s.training_forward_rows) for s in measured_steps(run) if s.training_forward_rows]
    return evaluation.batch_size is not None and bool(rows) and evaluation.batch_size < median(rows)


def mean_step_s(run: RunObservation) -> float:
    """Mean wall seconds of all measured steps, outliers included: the scale of the probes'
    per-step means (seconds in torch.save, print, host reads per measured step), which count
    every measured step; the profile leaves rare outliers out (a slow save is one)."""
    steps = measured_steps(run)
    return sum(s.wall_s for s in steps) / len(steps) if steps else 0.0


def training_share(run: RunObservation) -> float:
    """Share of the measured window's wall time spent in training steps (the rest: evaluation
    cut out of them). Turns a share of step time into a share of the run's time."""
    steps = measured_steps(run)
    train_s = sum(s.wall_s for s in steps)
    eval_s = sum(s.evaluation_s for s in steps)
    return train_s / (train_s + eval_s) if train_s > 0 else 1.0


def analyze(run: RunObservation) -> StepAnalysis:
    measured = measured_steps(run)
    median_s = median([s.wall_s for s in measured])
    typical, spread = _spread(measured, median_s)
    return StepAnalysis(measured, typical, median_s, spread, evaluation_share(run))


def step_profile(run: RunObservation) -> StepProfile | None:
    return analyze(run).profile
