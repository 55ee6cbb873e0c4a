"""Load batches in background worker processes (seed 001, Mejora 2; seed 000).

A DataLoader with `num_workers=0` builds every batch in the training process, so the model waits
while `__getitem__` and collation run. Workers prepare the next batches in parallel;
`persistent_workers` keeps them alive across epochs and `prefetch_factor` bounds how far ahead
they run. Same samples, same order, same collation: the loss trajectory must not change.
Iterable datasets are left alone (each worker would replay the whole stream).

One subtlety keeps the order identical: a fresh DataLoader iterator draws one number from the
global RNG (its workers' base seed) every epoch, a reused persistent one does not, so from the
second epoch on the shuffling (and every later random draw) would differ. For the loaders it
changed, the fix makes that draw on each reuse, as a fresh iterator would.
"""

from __future__ import annotations

from torch.utils.data import IterableDataset

from torchdoctor.diagnose.rules._common import MAX_WORKERS
from torchdoctor.techniques import finding_codes_for_fix
from torchdoctor.trials.fixes._common import draw_seed_on_reuse, loaders

NAME = "workers"
SUMMARY = "DataLoader(num_workers=<cores>, persistent_workers=True, prefetch_factor=2)"
TOLERANCE = 1e-6
TOLERANCE_REASON = "same batches in the same order: only where they are built changes"
FINDING_CODES = finding_codes_for_fix(NAME)  # from the technique registry
# what the fix can shorten (`--try auto` skips it when these take little of the run)
SHORTENS = ("data",)
# Batches are built in worker processes, which torch seeds per worker: random augmentation in
# __getitem__/collate draws other numbers (trials.semantics: "random draws differ", not "changed").
MOVES_DATA_RANDOMNESS = True
PERMANENT = (
    f"DataLoader(dataset, ..., num_workers=min({MAX_WORKERS}, os.cpu_count() or 1), "
    "persistent_workers=True, prefetch_factor=2)"
)


def worker_count(cpu_count: int | None) -> int:
    return max(1, min(MAX_WORKERS, cpu_count or 1))


def applies_to(run) -> bool:
    return any(
        loader.num_workers == 0 and not loader.iterable_dataset and (loader.cpu_count or 2) > 1
        for loader in loaders(run)
    )


def apply(hooks) -> None:
    workers = worker_count(hooks.cpu_count)

    def rewrite(kwargs: dict) -> dict:
        dataset = kwargs.get("dataset")
        if kwargs.get("num_workers", 0) or isinstance(dataset, IterableDataset):
            return kwargs
        kwargs.update(num_workers=workers, persistent_workers=True, prefetch_factor=2)
        hooks.mark_used(NAME)
        return kwargs

    hooks.loader_kwargs.append(rewrite)
    draw_seed_on_reuse(
        hooks, lambda given, final: final.get("num_workers", 0) and not given.get("num_workers", 0)
    )
