"""Does a fix keep what the script computes? Compare per-step losses from the same seed.

Every run starts from identically seeded generators, so the baseline's repeats should agree
exactly; their largest disagreement is the run-to-run noise. A variant "kept" the results when
every repeat's loss trajectory stays within the fix's tolerance of the baseline's first repeat,
"changed" when some step goes beyond it. When the baseline itself is noisier than the tolerance
(the script is not reproducible from a seed, e.g. unseeded worker randomness or nondeterministic
kernels), no claim can be made: "unverified".

One difference is not a change of what is learned: random augmentation. When the baseline's
batches drew from the global generators in the training process (trials.rng_probe) and the fix
moves batch building into worker processes (seeded per worker by torch), the draws differ by
design while the baseline reproduces itself exactly. That verdict is "random draws differ" (kept:
the same data distribution, the same order, other random numbers), distinct from "kept" (every
step within tolerance).
"""

from __future__ import annotations

from torchdoctor.trials.report import Semantics
from torchdoctor.trials.stats import loss_deviation

RANDOM_DRAWS_DIFFER = "random draws differ"
KEPT_VERDICTS = ("kept", RANDOM_DRAWS_DIFFER)


def _reproducible_random_loader(baseline_runs: list[dict], noise: float | None) -> bool:
    """The baseline drew random numbers while building batches, and repeating it with the same
    seed gave exactly the same losses: any difference comes from where the draws are made."""
    drew = any(run.get("loader_draws_random") for run in baseline_runs)
    return drew and noise is not None and noise == 0.0


def losses(run: dict) -> list[float | None]:
    return [step["loss"] for step in run["steps"]]


def baseline_noise(baseline_runs: list[dict]) -> float | None:
    if len(baseline_runs) < 2:
        return None
    reference = losses(baseline_runs[0])
    deviations = [loss_deviation(reference, losses(run))[0] for run in baseline_runs[1:]]
    deviations = [d for d in deviations if d is not None]
    return max(deviations) if deviations else None


def judge(
    baseline_runs: list[dict],
    variant_runs: list[dict],
    tolerance: float,
    reason: str,
    moves_data_randomness: bool = False,
    redraws_dropout: bool = False,
) -> Semantics:
    """`moves_data_randomness`: the variant builds batches in worker processes (workers fix).
    `redraws_dropout`: the variant draws Dropout masks from another generator (torch.compile)."""
    reference = losses(baseline_runs[0])
    noise = baseline_noise(baseline_runs)
    worst, first_changed, compared = None, None, 0
    for run in variant_runs:
        deviation, per_step = loss_deviation(reference, losses(run))
        if deviation is None:
            continue
        compared = max(compared, len(per_step))
        worst = deviation if worst is None else max(worst, deviation)
        beyond = [i for i, d in enumerate(per_step) if d > tolerance]
        if beyond and (first_changed is None or beyond[0] < first_changed):
            first_changed = beyond[0]
    if worst is None:
        verdict = "unknown"  # no loss was observed (no backward on a scalar)
    elif noise is not None and noise > tolerance:
        verdict = "unverified"
    else:
        verdict = "changed" if worst > tolerance else "kept"
    if (
        verdict == "changed"
        and moves_data_randomness
        and _reproducible_random_loader(baseline_runs, noise)
    ):
        verdict = RANDOM_DRAWS_DIFFER
    if (
        verdict == "changed"
        and redraws_dropout
        and any(run.get("dropout_active") for run in baseline_runs)
    ):
        # Other dropout masks give other losses whether or not the fix is exact: no claim.
        verdict = "unverified"
        reason = f"{reason}; active Dropout draws other random masks when compiled"
    return Semantics(verdict, tolerance, reason, worst, first_changed, compared, noise)


OPTIMISATION_CHANGED = "optimisation changed"
PER_SAMPLE_REASON = (
    "a larger batch takes fewer, larger steps: the loss is compared where both runs have seen "
    "the same number of samples, and differs by design"
)


def _losses_by_samples_seen(run: dict) -> dict[int, float]:
    """Each step's loss keyed by the samples seen once the step ended (steps whose samples or
    loss are unknown end the trajectory: later counts would not line up)."""
    seen, found = 0, {}
    for step in run["steps"]:
        if not step["samples"] or step["loss"] is None:
            break
        seen += step["samples"]
        found[seen] = step["loss"]
    return found


def judge_per_sample(baseline_runs: list[dict], variant_runs: list[dict]) -> Semantics:
    """A fix that changes the batch (trials.fixes.batch_size) changes the optimisation: never
    "kept". Its losses are compared with the baseline's first repeat where both have seen the same
    number of samples (the variant's step j, k*B samples a step, beside the baseline's step
    (j+1)k-1); `max_deviation` is the largest relative difference there (as stats.loss_deviation
    scales it), `compared_steps` how many such points there were. No common point: "unknown"."""
    reference = _losses_by_samples_seen(baseline_runs[0])
    worst, compared = None, 0
    for run in variant_runs:
        own = _losses_by_samples_seen(run)
        common = sorted(set(reference) & set(own))
        deviation, _ = loss_deviation([reference[n] for n in common], [own[n] for n in common])
        if deviation is None:
            continue
        compared = max(compared, len(common))
        worst = deviation if worst is None else max(worst, deviation)
    verdict = "unknown" if worst is None else OPTIMISATION_CHANGED
    noise = baseline_noise(baseline_runs)
    return Semantics(verdict, 0.0, PER_SAMPLE_REASON, worst, None, compared, noise)
