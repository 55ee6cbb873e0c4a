"""Keep DataLoader worker processes alive across epochs (`persistent_workers=True`).

A loader with workers starts `num_workers` new processes at every epoch (`iter(loader)`) and waits
for their first batches; with `persistent_workers=True` they are started once. Same samples in
the same order: a fresh iterator draws one number from the loader's generator every epoch (its
workers' base seed) and a reused one does not, so the fix makes that draw on each reuse, as a fresh
iterator would (see workers.py). Workers that draw random numbers (augmentation) keep their
generators across epochs instead of being re-seeded: those draws differ.
"""

from __future__ import annotations

from torchdoctor.techniques import finding_codes_for_fix
from torchdoctor.trials.fixes._common import draw_seed_on_reuse, loaders

NAME = "persistent_workers"
SUMMARY = "DataLoader(..., num_workers=N, persistent_workers=True)"
TOLERANCE = 1e-6
TOLERANCE_REASON = "same batches in the same order: only when the workers start changes"
FINDING_CODES = finding_codes_for_fix(NAME)  # from the technique registry
# what the fix can shorten (`--try auto` skips it when these take little of the run)
SHORTENS = ("data",)
MOVES_DATA_RANDOMNESS = True  # worker generators are no longer re-seeded at each epoch
PERMANENT = "DataLoader(dataset, ..., num_workers=N, persistent_workers=True)"


def applies_to(run) -> bool:
    return any(
        loader.num_workers > 0 and not loader.persistent_workers and loader.epochs_started > 1
        for loader in loaders(run)
    )


def apply(hooks) -> None:
    def rewrite(kwargs: dict) -> dict:
        if kwargs.get("num_workers", 0) and not kwargs.get("persistent_workers"):
            kwargs["persistent_workers"] = True
            hooks.mark_used(NAME)
        return kwargs

    hooks.loader_kwargs.append(rewrite)
    draw_seed_on_reuse(
        hooks,
        lambda given, final: (
            final.get("persistent_workers") and not given.get("persistent_workers")
        ),
    )
