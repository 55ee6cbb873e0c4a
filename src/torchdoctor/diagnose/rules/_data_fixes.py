"""Fix texts shared by the data-loading rules (D105, D108, D109, D110), so that two rules giving
the same advice give it in the same words. Pure strings; no torch."""

from __future__ import annotations

from torchdoctor.diagnose.observations import LoaderObservation
from torchdoctor.diagnose.rules._loader_call import call_keywords, rewrite_call

# Share of the data time left after a batched fetch of in-memory tensors: one indexing op per
# batch instead of one per sample plus a collate (bench/rule_fix_speedups.py measured the batched
# fetch 6.1x faster over an epoch, i.e. 84% saved; 80% is assumed).
BATCHED_FETCH_COST = 0.2

# Share of the per-sample work left when fixed pre-processing runs once and __getitem__ only
# indexes the cached result.
CACHED_ITEM_COST = 0.1


def _batch_sampler(loader: LoaderObservation, given: dict[str, str]) -> str:
    """The sampler of whole batches, drawing indices in the user's own order."""
    dataset = given.get("dataset", "dataset")
    if "sampler" in given:  # the user's sampler (DistributedSampler, weighted, ...) is kept
        indices = given["sampler"]
    elif loader.sampler_type == "RandomSampler":
        generator = f", generator={given['generator']}" if "generator" in given else ""
        indices = f"RandomSampler({dataset}{generator})"
    else:  # not shuffled: same order as before
        indices = f"SequentialSampler({dataset})"
    return f"BatchSampler({indices}, batch_size={loader.batch_size}, drop_last={loader.drop_last})"


def batched_fetch_fix(loader: LoaderObservation, *, drop_workers: bool = False) -> str:
    """Fetch whole batches from an indexable in-memory dataset in the training process, with the
    user's own batch size, order (shuffled or not, their sampler), drop_last and other settings.

    A loader built with a batch_sampler keeps its batches: it is passed as the sampler."""
    given = call_keywords(loader.call_source)
    workers: dict[str, str] = {"num_workers": "0"} if drop_workers else {}
    dropped = ("shuffle", "drop_last", "batch_sampler") + (
        ("persistent_workers", "prefetch_factor") if drop_workers else ()
    )
    notes = _list_indexing_note(loader.dataset_type)
    if "collate_fn" in given:
        notes += (
            "# with batch_size=None your collate_fn gets the whole batch fetched at once (not a\n"
            "# list of samples): make it take a batch, or leave it out\n"
        )
    if loader.batch_size is None:  # the loader was given a batch_sampler: keep the user's batches
        call = rewrite_call(
            loader,
            {
                "sampler": given.get("batch_sampler", "batch_sampler"),
                "batch_size": "None",
                **workers,
            },
            drop=dropped,
        )
        return (
            notes + "# keep your batch_sampler, passed as the sampler: each list of indices it\n"
            f"# yields is then fetched with one indexing op\nloader = {call}"
        )
    sampler = _batch_sampler(loader, given)
    imports = sorted(
        {"BatchSampler"} | {n for n in ("RandomSampler", "SequentialSampler") if n in sampler}
    )
    call = rewrite_call(
        loader, {"sampler": "batches", "batch_size": "None", **workers}, drop=dropped
    )
    return (
        notes + f"from torch.utils.data import {', '.join(imports)}\n"
        f"batches = {sampler}\nloader = {call}"
    )


# torch's own dataset wrappers: they pass a list of indices on to the dataset they wrap, so they
# must not be told to implement __getitems__ (QA2-13: random_split returns Subsets)
TORCH_WRAPPERS = ("Subset", "ConcatDataset", "StackDataset", "ChainDataset")


def _list_indexing_note(dataset_type: str) -> str:
    """What the dataset needs so that a list of indices returns a whole batch."""
    if dataset_type == "TensorDataset":
        return ""  # indexing it with a list of indices already returns a whole batch
    if dataset_type in TORCH_WRAPPERS:
        return (
            f"# {dataset_type} (e.g. from random_split) passes a list of indices on to the\n"
            "# dataset it wraps: works as is over a TensorDataset; over your own Dataset, give\n"
            "# that class __getitems__(self, indices) returning a whole batch\n"
        )
    return (
        f"# {dataset_type or 'your Dataset'} must return a whole batch for a list of indices:\n"
        "#     def __getitems__(self, indices): return self.x[indices], self.y[indices]\n"
    )


def cheaper_items_fix(workers: int | None = None, loader: LoaderObservation | None = None) -> str:
    """Make each sample cheaper: fixed work once, random work per batch, the rest in workers
    (the user's own loader call, when known, with only the worker settings changed)."""
    spread = {"num_workers": str(workers), "persistent_workers": "True"}
    call = rewrite_call(loader or LoaderObservation(location=""), spread)
    tail = (
        f"# 3. per-sample work that must stay: spread it over workers\nloader = {call}"
        if workers
        else "# 3. every core already loads data: what stays per sample must get cheaper"
    )
    return (
        "# 1. fixed pre-processing (decode, convert, resize, normalise): once, in __init__ or a\n"
        "#    cache on disk, over the whole array at a time; __getitem__ then only indexes\n"
        "self.x = preprocess(raw_samples)  # one vectorised pass, not one per sample per epoch\n"
        "def __getitem__(self, i):\n"
        "    return self.x[i], self.y[i]\n"
        "# 2. random augmentation: apply it to whole batches after the loader, vectorised\n"
        "for x, y in loader:\n"
        "    x = augment_batch(x)  # one op per batch (on the device when there is one)\n" + tail
    )
