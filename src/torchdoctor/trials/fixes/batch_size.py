"""A k times larger training batch, the learning rate scaled with it (rule D202's fix).

Unlike the other fixes this one changes the optimisation: k times fewer updates per epoch, each on
k times the samples. It is tried only when asked for by name (`--try batch_size`; `all` and
`auto` never pick a change of what is learned), and it is judged on what it changes:

- Speed per sample (`PER_SAMPLE`): a step now holds k times the samples, so the trial compares
  seconds per sample seen (trials.stats), not per step.
- The loss at equal samples seen (trials.semantics.judge_per_sample): the variant's step j has
  seen as many samples as the baseline's step (j+1)k-1; the verdict is "optimisation changed"
  with how far apart those losses are, never "kept".

The change: every training DataLoader (the loaders the diagnosis saw training, matched by the
line that builds them; every loader with an int batch_size when no diagnosis ran) gets
`batch_size=k*B`; each optimizer's learning rate is scaled when it is built, before a scheduler
reads it: linear (k) for SGD, sqrt(k) for the others (Adam-family and the rest, whose
per-parameter step sizes tolerate a larger batch with about sqrt(k); Goyal et al. 2017, Malladi et
al. 2022). k is the factor rule D202 names (the batch what-if's best per-sample gain), else 4.
A batch the program slices from its own tensors is not a DataLoader's: nothing changes ("no
effect"), the learning rate included (it is scaled only once a loader's batch was). An optimizer
built before the loader gets its rate scaled when the loader is built; a scheduler built in
between keeps the rate it read. The trial window counts steps: a variant run holds k times the
samples (k times the cycles where the window is whole cycles), so it takes about k times longer.
"""

from __future__ import annotations

import math

import torch

from torchdoctor.diagnose.callsite import user_location
from torchdoctor.techniques import finding_codes_for_fix

NAME = "batch_size"
SUMMARY = "DataLoader(batch_size=k*B) with the learning rate scaled (linear for SGD, sqrt else)"
# a new optimisation: no loss difference counts as "kept" (losses are compared at equal samples
# seen, trials.semantics.judge_per_sample)
TOLERANCE = 0.0
TOLERANCE_REASON = (
    "a larger batch changes the optimisation (fewer, larger steps): losses are compared at equal "
    "samples seen, not step by step"
)
FINDING_CODES = finding_codes_for_fix(NAME)  # from the technique registry
# what the fix can shorten per sample: every per-step fixed cost (the model's ops, the optimizer
# step, fetching a batch, the loop's own Python) is paid once per k times the samples
SHORTENS = ("step",)
PER_SAMPLE = True  # trials compare time per sample and loss per sample seen
DEFAULT_FACTOR = 4
LINEAR_RULE = ("SGD",)
PERMANENT = (
    "loader = DataLoader(dataset, batch_size=4 * batch_size, ...)\n"
    "optimizer = torch.optim.SGD(model.parameters(), lr=4 * lr)  # linear rule for SGD\n"
    "# optimizer = torch.optim.AdamW(model.parameters(), lr=2 * lr)  # sqrt rule for Adam-family\n"
    "# then re-check convergence: fewer updates per epoch"
)


def applies_to(run) -> bool:
    return False  # a change of what is learned is never picked by `all` or `auto`


def factor_for(run) -> int:
    """The batch factor rule D202 names for the diagnosed run (the one its batch what-if found
    best per sample, else its estimate's), else DEFAULT_FACTOR."""
    if run is None:
        return DEFAULT_FACTOR
    from torchdoctor.diagnose.rules import d202_batch_too_small

    findings = d202_batch_too_small.check(run)
    return int(findings[0].details["batch_factor"]) if findings else DEFAULT_FACTOR


def training_sites(run) -> set[str] | None:
    """The lines that built the training loaders the diagnosis saw (None: no diagnosis, or it saw
    no loader with a batch size: every loader is scaled)."""
    if run is None:
        return None
    sites = {ld.location for ld in run.loaders if ld.role != "eval" and ld.batch_size}
    return sites or None


def lr_factor(optimizer: torch.optim.Optimizer, factor: int) -> float:
    linear = any(cls.__name__ in LINEAR_RULE for cls in type(optimizer).__mro__)
    return float(factor) if linear else math.sqrt(factor)


def _scale_lr(optimizer: torch.optim.Optimizer, scale: float) -> None:
    for group in optimizer.param_groups:
        if "lr" in group:
            group["lr"] = group["lr"] * scale


def apply(hooks) -> None:
    factor = factor_for(hooks.observation)
    sites = training_sites(hooks.observation)
    built: list[torch.optim.Optimizer] = []  # optimizers built before a loader was scaled

    def scale(optimizer: torch.optim.Optimizer) -> None:
        _scale_lr(optimizer, lr_factor(optimizer, factor))

    def rewrite(kwargs: dict) -> dict:
        batch = kwargs.get("batch_size", 1)
        if kwargs.get("batch_sampler") is not None or not isinstance(batch, int) or batch < 1:
            return kwargs  # batches the program chose itself, or fetched whole already
        if sites is not None and user_location(depth=1) not in sites:
            return kwargs  # an evaluation loader: its batch does not change the training
        kwargs["batch_size"] = factor * batch
        if NAME not in hooks.used:  # the learning rate follows the batch, once
            hooks.mark_used(NAME)
            for optimizer in built:
                scale(optimizer)
        return kwargs

    def on_optimizer(optimizer: torch.optim.Optimizer) -> None:
        if NAME in hooks.used:
            scale(optimizer)
        else:
            built.append(optimizer)

    hooks.loader_kwargs.append(rewrite)
    hooks.on_optimizer.append(on_optimizer)
