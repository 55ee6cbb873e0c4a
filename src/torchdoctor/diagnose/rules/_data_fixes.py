"""Fix texts shared by the data-loading rules (D105, D108, D109, D110), so that two rules giving
the same advice give it in the same words. Pure strings; no torch."""

from __future__ import annotations

# Share of the data time left after a batched fetch of in-memory tensors: one indexing op per
# batch instead of one per sample plus a collate (bench/rule_fix_speedups.py measured the batched
# fetch 6.1x faster over an epoch, i.e. 84% saved; 80% is assumed).
BATCHED_FETCH_COST = 0.2

# Share of the per-sample work left when fixed pre-processing runs once and __getitem__ only
# indexes the cached result.
CACHED_ITEM_COST = 0.1


def batched_fetch_fix(
    batch_size: int | None, *, drop_workers: bool = False, dataset_type: str = "TensorDataset"
) -> str:
    """Fetch whole batches from an indexable in-memory dataset in the training process.

    `batch_size` None: the loader was built with a batch_sampler, whose batches are kept."""
    workers = ", num_workers=0" if drop_workers else ""
    custom = _list_indexing_note(dataset_type)
    if batch_size is None:  # the loader was given a batch_sampler: keep the user's batches
        return (
            custom + "# keep your batch_sampler, passed as the sampler: each list of indices it\n"
            "# yields is then fetched with one indexing op\n"
            f"loader = DataLoader(dataset, sampler=batch_sampler, batch_size=None{workers})"
        )
    return (
        custom + "from torch.utils.data import BatchSampler, RandomSampler\n"
        f"sampler = BatchSampler(RandomSampler(dataset), batch_size={batch_size}, "
        "drop_last=False)\n"
        f"loader = DataLoader(dataset, sampler=sampler, batch_size=None{workers})"
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


def cheaper_items_fix(workers: int | None = None) -> str:
    """Make each sample cheaper: fixed work once, random work per batch, the rest in workers."""
    tail = (
        f"# 3. per-sample work that must stay: spread it over workers\n"
        f"loader = DataLoader(dataset, ..., num_workers={workers}, persistent_workers=True)"
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
