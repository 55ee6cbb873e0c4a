"""Shared arithmetic for the rules: step-time shares, formatting, severity and sources.

Everything here is pure (no torch). Modules whose name starts with an underscore are helpers, not
rules: `all_rules()` skips them.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Severity
from torchdoctor.diagnose.observations import (
    LoaderObservation,
    OptimizerObservation,
    RunObservation,
)

# The step analysis is shared with the report (one definition of which steps count); the rules
# import it from here.
from torchdoctor.diagnose.step_analysis import COMPUTE_PHASES as COMPUTE_PHASES
from torchdoctor.diagnose.step_analysis import StepProfile as StepProfile
from torchdoctor.diagnose.step_analysis import analyze, typical_batch
from torchdoctor.diagnose.step_analysis import clamp as clamp
from torchdoctor.diagnose.step_analysis import evaluation_share as evaluation_share
from torchdoctor.diagnose.step_analysis import mean_step_s as mean_step_s
from torchdoctor.diagnose.step_analysis import measured_steps as measured_steps
from torchdoctor.diagnose.step_analysis import median as median
from torchdoctor.diagnose.step_analysis import step_profile as step_profile
from torchdoctor.diagnose.step_analysis import training_share as training_share

# A finding whose fix would save at least this share of step time is a warning; below it, info.
# Relative to the measured step, so it means the same on a laptop CPU and on an H100.
WARNING_SAVING = 0.10

# Share of forward+backward time assumed to be spent in matmul/convolution kernels when the run
# gives no per-kernel split. Used by the precision rules (D204, D206, D207) in Amdahl's law.
MATMUL_SHARE = 0.5

PYTORCH_TUNING_GUIDE = "https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html"
PYTORCH_AMP_RECIPE = "https://pytorch.org/docs/stable/amp.html"


def kernel_gain_saving(compute_share: float, kernel_gain: float) -> float:
    """Share of the step saved when matmul/convolution kernels (MATMUL_SHARE of forward and
    backward, which take `compute_share` of the step) get `kernel_gain` faster (Amdahl)."""
    return clamp(compute_share * MATMUL_SHARE * kernel_gain)


def severity_for(saving: float) -> Severity:
    return "warning" if saving >= WARNING_SAVING else "info"


def pct(share: float) -> str:
    return f"{100 * share:.0f}%"


def secs(seconds: float) -> str:
    """Human duration: 'µs' below a millisecond, 'ms' below a second, else 's'."""
    if seconds <= 0:
        return "0 ms"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1.0:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


def gib(n_bytes: float) -> str:
    return f"{n_bytes / 2**30:.2f} GiB"


def on_cuda(run: RunObservation) -> bool:
    return run.environment.device_type == "cuda"


def typical_batch_size(run: RunObservation) -> int | None:
    """The run's training batch (samples per step, all micro-batches): the one every rule
    prints, and every saving or what-if that scales by the batch scales (`typical_batch`)."""
    return typical_batch(run.steps)


def training_loaders(run: RunObservation) -> list[LoaderObservation]:
    """Loaders that fed training steps ('unknown' counts when no loader is marked 'train')."""
    used = [ld for ld in run.loaders if ld.batches > 0]
    train = [ld for ld in used if ld.role == "train"]
    return train or [ld for ld in used if ld.role == "unknown"]


def cpu_count(run: RunObservation, loader: LoaderObservation | None = None) -> int:
    return (loader.cpu_count if loader else None) or run.environment.cpu_count or 1


MAX_WORKERS = 8  # DataLoader workers proposed at most (as `--try workers` starts): more rarely help


def suggested_workers(cpus: int) -> int:
    """Workers to suggest: one core stays with the training process; more than 8 rarely helps."""
    return max(1, min(MAX_WORKERS, cpus - 1))


def loader_wait_with_workers(batch_s: float, compute_s: float, workers: int) -> float:
    """Seconds per step the training process would still wait for data with `workers` workers.

    Workers prepare batches in parallel while the step computes: each needs `batch_s` per batch,
    so together they deliver one every batch_s / workers, and the training process waits only for
    what the step's own `compute_s` does not hide. Assumes the workers get cores of their own.
    """
    return max(0.0, batch_s / max(workers, 1) - compute_s)


def model_has(run: RunObservation, attribute: str) -> bool:
    return any(getattr(m, attribute) for m in run.models)


def typical_step_s(run: RunObservation) -> float:
    """Median step time: robust to the odd step another process on the machine slowed down."""
    return analyze(run).median_step_s


INPUT_PHASES = ("data", "h2d")


def over_input_waits(run: RunObservation, share: float, step_s: float, waited_s: float) -> float:
    """`share` of a step of `step_s` that waited `waited_s` for its input (the profile's typical
    step, or the median step, and that step's wait) as a share of the measured steps as they
    ran: its seconds over `step_s` plus what the measured steps waited for input beyond
    `waited_s` on average. A fix of the step's own work divides none of that wait, and a
    typical or median step does not weigh it: an epoch's start-up of respawned workers, left
    out of the profile as a rare outlier (d103_workers_respawned: 41 ms first batches, one
    step in four; D202 stated 44% of the typical step where `--try batch_size` gained 12%, and
    8% in runs where one more slow step put the epoch starts back in the profile). The rest of
    a slow step (a busy machine's preemption, spread over its phases) grows with the work the
    fix removes, and is left as it is; so is a wait where no training loader has workers (the
    training process loads the batch itself: its time there is work, preempted as the rest on a
    busy machine). Never more than `share`."""
    steps = measured_steps(run)
    idle = any(ld.num_workers > 0 for ld in training_loaders(run))
    if share <= 0 or step_s <= 0 or not steps or not idle:
        return clamp(share)
    mean_wait_s = sum(sum(s.phases.get(p, 0.0) for p in INPUT_PHASES) for s in steps) / len(steps)
    return clamp(share * step_s / (step_s + max(0.0, mean_wait_s - waited_s)))


def over_profile_input_waits(run: RunObservation, profile: StepProfile, share: float) -> float:
    """`share` of the step profile's typical step as a share of the measured steps as they ran
    (`over_input_waits` with that step and its wait): for a rule whose fix shortens the step's
    own work (a mode's cost per op, the model's precision), not its wait for input."""
    return over_input_waits(run, share, profile.step_s, profile.seconds(*INPUT_PHASES))


def model_time_s(run: RunObservation) -> float:
    """Median seconds per step outside data loading and copies: where the model's ops run."""
    return median(
        [
            s.wall_s - s.phases.get("data", 0.0) - s.phases.get("h2d", 0.0)
            for s in measured_steps(run)
        ]
    )


def median_phase_s(run: RunObservation, *phases: str) -> float:
    """Steady-state seconds per step in the given phases (the median ignores one-off spikes)."""
    return median([sum(s.phases.get(p, 0.0) for p in phases) for s in measured_steps(run)])


# Copies from pinned (page-locked) host memory run at roughly twice the bandwidth of copies from
# pageable memory, which the driver must first stage through a pinned buffer; and only pinned
# copies can be non_blocking. Rules D104 and D402 estimate that half the copy time is saved.
PINNED_COPY_SAVING = 0.5


def stepped_optimizers(run: RunObservation) -> list[OptimizerObservation]:
    """Optimizers that stepped in the run; all of them when no step was counted. One built but
    unused in the mode the script ran in is not the one to advise about."""
    return [o for o in run.optimizers if o.steps > 0] or list(run.optimizers)


def parameter_tensors(run: RunObservation) -> int:
    """The models' parameter tensors; when no module with parameters was called (a forward
    written with F.* on weight tensors the program holds), the tensors its optimizers step."""
    in_models = sum(m.parameter_tensors for m in run.models)
    return in_models or sum(o.param_tensors for o in run.optimizers)


# A training step dispatches a bounded number of ops per parameter tensor: a few in the forward,
# two or three times that in the backward, and up to about ten in a per-tensor optimizer. Well
# above that, a Python loop is issuing ops one small piece at a time (rule D203).
OPS_PER_PARAMETER_TENSOR = 40
BASE_OPS_PER_STEP = 200


def expected_ops(run: RunObservation) -> float:
    return OPS_PER_PARAMETER_TENSOR * parameter_tensors(run) + BASE_OPS_PER_STEP


def uses_autocast(run: RunObservation) -> bool:
    """Most training forwards ran under autocast, or compute ran in fp16/bf16."""
    p = run.precision
    if p.forwards > 0:
        return p.autocast_forwards / p.forwards >= 0.5
    return p.low_precision_ops > 0 and p.low_precision_ops >= p.float32_ops


def conv_layers(run: RunObservation) -> int:
    return sum(m.conv_layers for m in run.models)


def steps_per_epoch(run: RunObservation) -> int | None:
    """Training steps in one pass over the training loader, when its length is known."""
    for loader in training_loaders(run):
        if loader.dataset_len and loader.batch_size:
            per_update = max(1, median([float(s.micro_batches) for s in run.steps]) or 1)
            batches = -(-loader.dataset_len // loader.batch_size)
            return max(1, round(batches / per_update))
    return None


def epoch_seconds(run: RunObservation) -> float | None:
    """Wall seconds of one epoch: its training steps and the evaluation between them, as
    measured (mean step, evaluation per step), when the epoch's length is known."""
    steps = measured_steps(run)
    count = steps_per_epoch(run)
    if not steps or count is None:
        return None
    per_step = sum(s.wall_s + s.evaluation_s for s in steps) / len(steps)
    return count * per_step


def memory_use(run: RunObservation) -> float | None:
    """Peak memory as a share of capacity, when both are known."""
    m = run.memory
    if not m.peak_bytes or not m.capacity_bytes:
        return None
    return m.peak_bytes / m.capacity_bytes


def new_iterator_per_batch(loader: LoaderObservation) -> bool:
    """iter(loader) was called for (nearly) every batch: `next(iter(loader))` inside the loop."""
    if loader.epochs_started < 2 or loader.batches <= 0:
        return False
    per_iterator = loader.batches / loader.epochs_started
    per_epoch = (
        loader.dataset_len / loader.batch_size if loader.dataset_len and loader.batch_size else None
    )
    return per_iterator <= 2 and (per_epoch is None or per_epoch > 2 * per_iterator)


def typical(mean_per_step: float, typical_per_step: float) -> float:
    """A probe's seconds per step with the steps that had some each at their median (one call
    another process stalled on a busy machine counted as a typical one), else the mean (an
    observation recorded without it)."""
    return min(mean_per_step, typical_per_step) if typical_per_step > 0 else mean_per_step
