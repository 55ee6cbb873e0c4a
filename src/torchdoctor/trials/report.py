"""The result of `diagnose --try`: plain dataclasses, rendered by trials.render (JSON schema in
docs/try.md, section "JSON: the trials section")."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

SCHEMA_VERSION = 1


@dataclass
class Spread:
    median: float | None
    low: float | None  # smallest per-repeat value
    high: float | None  # largest per-repeat value
    count: int = 0  # how many values (repeats or paired rounds)
    values: list[float] = field(default_factory=list)  # each repeat's or round's, in run order

    def middle(self) -> tuple[float, float] | None:
        """(low, high) without the most extreme value at each end once there are 5 or more
        (one disturbed round of six does not widen it); all values below that."""
        ordered = sorted(self.values)
        if not ordered:
            return None
        cut = 1 if len(ordered) >= 5 else 0
        return ordered[cut], ordered[len(ordered) - 1 - cut]


@dataclass
class ConfigResult:
    """One configuration (the baseline, or a set of fixes) over all its repeats."""

    name: str  # "baseline", a fix name, or "all"
    fixes: list[str]
    runs: int  # repeats that produced measurements
    step_s: Spread  # mean step wall time of each repeat (warm-up excluded), over repeats
    samples_per_s: Spread
    cpu_step_s: Spread  # the same for the training process's CPU time per step
    peak_memory_bytes: int | None  # median over repeats
    memory_source: str  # "cuda_allocator" or "process_rss"
    losses: list[float | None]  # per-step loss of the first repeat
    elapsed_s: float  # median wall time of one worker run (script start to stop)
    status: str = "ok"  # "ok", "crashed", "failed", "no effect"
    prefetch_steps: int = 0  # steps discarded after warm-up: the loaders' prefetch queue
    error: str | None = None
    stderr_tail: str = ""
    # files in the program's folder its runs changed and could not put back (a process started
    # afresh changed them, or they were past the copy limit: trials/program_files.py), sorted
    files_not_restored: list[str] = field(default_factory=list)


@dataclass
class Semantics:
    # "kept", "random draws differ" (kept: augmentation now drawn in loader workers), "changed",
    # "unverified" (baseline not reproducible, or compiled Dropout draws other masks), "unknown",
    # "optimisation changed" (a larger batch: losses compared at equal samples seen)
    verdict: str
    tolerance: float  # relative per-step loss tolerance used
    tolerance_reason: str
    max_deviation: float | None  # largest relative per-step loss difference seen
    first_changed_step: int | None  # index of the first step beyond tolerance
    compared_steps: int
    baseline_noise: float | None  # largest difference between baseline repeats (same seed)


@dataclass
class VariantResult:
    config: ConfigResult
    speedup: Spread | None  # baseline step time / variant step time, per paired repeat
    throughput_ratio: float | None  # variant samples/s / baseline samples/s (medians)
    memory_change: float | None  # variant peak / baseline peak - 1
    semantics: Semantics | None
    verdict: str  # "faster", "slower", "no clear gain", "suspicious", "changes results", ...
    cpu_speedup: Spread | None = None  # the same ratio in training-process CPU time per step
    # the ratios are per sample, not per step: the fix changes the batch (`--try batch_size`)
    per_sample: bool = False
    # the clock the verdict was read on: "cpu" (the training process's CPU time: fixes of its own
    # work on a CPU device, steady where other jobs share the machine), "wall", or "phase" (the
    # fixes' own phases, `phase_speedup`, where at least 3 rounds recorded them)
    decided_on: str = "wall"
    # where the centre of the paired speedups on that clock lies with 90% chance
    # (trials.stats.gain_interval); None: fewer than 5 rounds
    interval: list[float] | None = None
    # the same ratio on a narrower clock: the fixes' own phases timed alone (PHASE_CLOCK of each
    # fix), against the baseline's step on the CPU or wall clock (stats.phase_speedups); None
    # where a fix names no phase of its own. The verdict reads it where `decided_on` is "phase"
    phase_speedup: Spread | None = None
    phase_clock: tuple[str, ...] = ()
    # the paired rounds the verdict read, on `decided_on`
    decided_speedup: Spread | None = None


@dataclass
class Suggestion:
    name: str
    reason: str  # why it is never applied automatically


@dataclass
class TrialReport:
    target: str
    argv: list[str]
    steps: int
    warmup: int
    repeats: int
    seed: int
    device_type: str
    baseline: ConfigResult
    variants: list[VariantResult]
    suggestions: list[Suggestion] = field(default_factory=list)
    not_applicable: dict[str, str] = field(default_factory=dict)  # fix -> why it was not tried
    permanent_change: str = ""  # unified diff of the script, or the code snippets to apply
    permanent_change_kind: str = "snippets"  # "diff" or "snippets"
    total_s: float = 0.0  # wall time of all trials
    # largest step-time ratio between consecutive baseline runs, minus 1 (None: one run)
    baseline_spread: float | None = None
    # steps in one cycle of the program's loop (an epoch, or the evaluation period), None: not
    # known; `steps` is rounded up to whole cycles when they fit (trials.cycle)
    cycle_steps: int | None = None
    window: str = ""  # one line: what the measured steps of each run cover
    schema_version: int = SCHEMA_VERSION

    def to_dict(self) -> dict:
        return asdict(self)
