"""DataLoader probe: construction site and settings, epochs, worker start-up, blocking waits.

Patches `DataLoader.__init__` (where the `loader_kwargs` hook points may rewrite its arguments), `DataLoader.__iter__`
(an epoch starts; worker processes start here) and `_BaseDataLoaderIter.__next__` (the main
process blocks until a batch is ready: the "data" phase). With num_workers=0 the dataset and
collate run in our process, so the iterator's fetcher is wrapped to time `__getitem__` and collate;
with workers, their processes' CPU time is read from /proc as batches arrive (the work per batch).
"""

from __future__ import annotations

import inspect
import os
import time
import weakref

import torch
from torch.utils.data import ConcatDataset, DataLoader, IterableDataset, StackDataset, Subset
from torch.utils.data.dataloader import _BaseDataLoaderIter

from torchdoctor.cores import usable_cores
from torchdoctor.diagnose.callsite import user_location
from torchdoctor.diagnose.observations import LoaderObservation
from torchdoctor.diagnose.probes.base import Probe
from torchdoctor.diagnose.source_lines import call_at, split_location
from torchdoctor.diagnose.steps import counted_median

EPOCH = "_torchdoctor_epoch"  # attribute set on each DataLoader iterator we saw started
# the workers' CPU time is read at every batch for the first CPU_READ_ALWAYS batches (an epoch
# may be short), then every CPU_READ_EVERY batches (a /proc read per worker: a few us)
CPU_READ_ALWAYS = 32
CPU_READ_EVERY = 8


def _process_cpu_s(pid: int) -> float | None:
    """CPU seconds a process has run (Linux: /proc schedstat in ns, else stat's clock ticks)."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        pass
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def _worker_pids(iterator) -> tuple[int, ...]:
    return tuple(getattr(w, "pid", None) or 0 for w in getattr(iterator, "_workers", None) or ())


def _workers_cpu_s(pids: tuple[int, ...]) -> float | None:
    """CPU seconds these worker processes have run so far (None: none, or not readable)."""
    total = 0.0
    for pid in pids:
        cpu = _process_cpu_s(pid) if pid else None
        if cpu is None:
            return None
        total += cpu
    return total if pids else None


def _settings(observation: LoaderObservation) -> tuple:
    o = observation
    return (
        o.dataset_type,
        o.dataset_len,
        o.batch_size,
        o.num_workers,
        o.pin_memory,
        o.persistent_workers,
        o.sampler_type,
        o.drop_last,
    )


def _tensor_bytes(batch, depth: int = 0) -> int:
    """Bytes of the tensors in a collated batch (a tensor, or tuples, lists and dicts of them,
    three levels deep): what a collate that only stacks samples has to copy."""
    if isinstance(batch, torch.Tensor):
        return batch.nelement() * batch.element_size()
    if depth >= 3:
        return 0
    if isinstance(batch, dict):
        batch = list(batch.values())
    if isinstance(batch, (list, tuple)):
        return sum(_tensor_bytes(part, depth + 1) for part in batch[:64])
    return 0


# The bytes a collate returned are counted for the first WEIGH_FIRST collates, then for one in
# WEIGH_EVERY: the mean per collate is what the rules read, and walking every batch's structure
# was a per-step cost of the probe (a loop's batches have one structure and size)
WEIGH_FIRST = 16
WEIGH_EVERY = 8


def _tensor_refs(batch) -> list:
    """Weak references to a batch's tensors: the batch itself, or those among the items of its
    tuple, list or dict (not deeper: a batch is read at every step). Weak: the program's batch
    is not kept alive past its own references."""
    if isinstance(batch, torch.Tensor):
        return [weakref.ref(batch)]
    if isinstance(batch, dict):
        batch = list(batch.values())
    if isinstance(batch, (list, tuple)):
        return [weakref.ref(t) for t in batch[:16] if isinstance(t, torch.Tensor)]
    return []


def _wrapped_types(dataset, depth: int = 0) -> tuple[str, ...]:
    """The innermost dataset types under torch's index-remapping wrappers (a Subset's dataset, a
    ConcatDataset's or StackDataset's parts): what a fetch through them really indexes."""
    if depth < 8 and isinstance(dataset, Subset):
        return _wrapped_types(dataset.dataset, depth + 1) or (type(dataset.dataset).__name__,)
    if depth < 8 and isinstance(dataset, (ConcatDataset, StackDataset)):
        parts = dataset.datasets  # StackDataset's: a tuple, or a dict of named datasets
        parts = list(parts.values()) if isinstance(parts, dict) else list(parts)
        inner = [_wrapped_types(d, depth + 1) or (type(d).__name__,) for d in parts]
        return tuple(sorted({name for names in inner for name in names}))
    return ()


class _LoaderStats:
    """The observation plus counters that become means at the end."""

    def __init__(self, observation: LoaderObservation) -> None:
        self.observation = observation
        self.fetch_s = 0.0
        self.collate_s = 0.0
        self.collate_bytes = 0  # of the tensors the collates returned, the ones weighed
        self.collates = 0
        self.collates_weighed = 0  # collates whose bytes were counted (WEIGH_FIRST)
        self.fetches = 0
        self.items = 0
        self.fetch_sizes: dict[int, int] = {}  # samples per fetch -> fetches of that many
        self.train_votes = 0
        self.eval_votes = 0
        self.worker_cpu_s = 0.0  # the workers' CPU seconds between reads ...
        self.worker_cpu_batches = 0  # ... over this many batches delivered
        self.clock: _WorkerClock | None = None  # persistent workers keep theirs across epochs


class _WorkerClock:
    """The workers' CPU time at the last read, and the batches delivered since."""

    def __init__(self, pids: tuple[int, ...], cpu_s: float) -> None:
        self.pids = pids
        self.cpu_s = cpu_s
        self.batches = 0


class _EpochState:
    def __init__(self, stats: _LoaderStats, started: float) -> None:
        self.stats = stats
        self.started = started
        self.first = True


class LoaderProbe(Probe):
    def install(self, patcher) -> None:
        self.loaders: dict[int, _LoaderStats] = {}  # id(loader) -> stats (loaders kept alive below)
        # (site, settings) -> stats: a loader built again at the same site (every epoch) shares
        # the observation of the first, so its epochs add up as those of one loader would
        self.sites: dict[tuple, _LoaderStats] = {}
        self._alive: list = []
        self.retired: list = []  # the loaders, after stop()
        self._patcher = patcher
        patcher.replace(DataLoader, "__init__", self._wrap_init)
        patcher.replace(DataLoader, "__iter__", self._wrap_iter)
        patcher.replace(_BaseDataLoaderIter, "__next__", self._wrap_next)

    # -- patches ------------------------------------------------------------------------------
    def _wrap_init(self, original):
        probe = self
        signature = inspect.signature(original)

        hooks = self.session.hooks

        def __init__(loader, *args, **kwargs):
            if hooks.loader_kwargs:
                hooks.construct_loader(original, signature, loader, args, kwargs)
            else:
                original(loader, *args, **kwargs)
            location = user_location()
            stats = probe._register(loader, location)
            where = split_location(location)
            if where is not None:  # read once per loader built, not per batch
                stats.observation.call_source = call_at(*where, type(loader).__name__)

        return __init__

    def _wrap_iter(self, original):
        probe = self

        def __iter__(loader):
            stats = probe._register(loader, None)
            observation = stats.observation
            observation.epochs_started += 1
            probe.session.loader_iter_started(loader)
            if observation.num_workers and (
                not observation.persistent_workers
                or observation.epochs_started <= observation.loaders_built
            ):
                observation.workers_spawned += observation.num_workers
            started = time.perf_counter()
            probe.tracker.push("data")
            try:
                iterator = original(loader)
            finally:
                probe.tracker.pop()
                probe.tracker.data_wait(started, time.perf_counter(), False)
            if not hasattr(iterator, EPOCH) and hasattr(iterator, "_dataset_fetcher"):
                probe._time_fetcher(iterator._dataset_fetcher, stats)
            # on the iterator itself: a WeakKeyDictionary look-up per batch costs ~1 us
            setattr(iterator, EPOCH, _EpochState(stats, started))
            return iterator

        return __iter__

    def _wrap_next(self, original):
        probe = self
        tracker = self.tracker
        session = self.session

        def __next__(iterator):
            state = getattr(iterator, EPOCH, None)
            session.data_fetch_started()  # may close a step (and stop the program): before push
            tracker.push("data")
            started = time.perf_counter()
            try:
                batch = original(iterator)
            except BaseException:  # StopIteration (its workers shut down) or the loader failed
                tracker.pop()
                tracker.data_wait(started, time.perf_counter(), True)
                raise
            ended = time.perf_counter()
            tracker.pop()
            tracker.data_wait(started, ended, False)
            session.loader_batch = _tensor_refs(batch)
            if state is not None:
                probe._count_batch(state, ended - started)
                if iterator._num_workers:
                    probe._read_worker_cpu(state.stats, iterator)
            return batch

        return __next__

    def _time_fetcher(self, fetcher, stats: _LoaderStats) -> None:
        """num_workers=0: time the dataset (fetch minus collate) and collate in this process."""

        def wrap_fetch(fetch):
            def timed_fetch(possibly_batched_index):
                started = time.perf_counter()
                out = fetch(possibly_batched_index)
                stats.fetch_s += time.perf_counter() - started
                stats.fetches += 1
                auto = getattr(fetcher, "auto_collation", True)
                size = len(possibly_batched_index) if auto else 1
                stats.items += size
                stats.fetch_sizes[size] = stats.fetch_sizes.get(size, 0) + 1
                return out

            return timed_fetch

        def wrap_collate(collate):
            def timed_collate(batch):
                started = time.perf_counter()
                out = collate(batch)
                stats.collate_s += time.perf_counter() - started
                if stats.collates < WEIGH_FIRST or stats.collates % WEIGH_EVERY == 0:
                    stats.collate_bytes += _tensor_bytes(out)
                    stats.collates_weighed += 1
                stats.collates += 1
                return out

            return timed_collate

        self._patcher.replace(fetcher, "fetch", wrap_fetch)
        if getattr(fetcher, "collate_fn", None) is not None:
            self._patcher.replace(fetcher, "collate_fn", wrap_collate)

    # -- bookkeeping --------------------------------------------------------------------------
    def _register(self, loader, location: str | None) -> _LoaderStats:
        stats = self.loaders.get(id(loader))
        if stats is not None:
            return stats
        dataset = getattr(loader, "dataset", None)
        try:
            length = len(dataset)
        except TypeError:
            length = None
        observation = LoaderObservation(
            location=location or "<constructed before diagnosis>",
            dataset_type=type(dataset).__name__,
            wrapped_dataset_types=_wrapped_types(dataset),
            dataset_len=length,
            iterable_dataset=isinstance(dataset, IterableDataset),
            batch_size=loader.batch_size,
            num_workers=loader.num_workers,
            pin_memory=bool(loader.pin_memory),
            persistent_workers=bool(loader.persistent_workers),
            prefetch_factor=loader.prefetch_factor if loader.num_workers else None,
            cpu_count=usable_cores(),
            sampler_type=type(getattr(loader, "sampler", None)).__name__,
            drop_last=bool(getattr(loader, "drop_last", False)),
        )
        self._alive.append(loader)  # ids stay unique while we hold them
        keys: list[tuple] = []
        if location is not None:
            settings = _settings(observation)
            # one dataset object with a length that grows (a replay buffer wrapped in a new
            # DataLoader for every batch) is the same loader built again, not a second one
            keys = [(location, *settings), (location, id(dataset), *settings[2:])]
        stats = next((self.sites[k] for k in keys if k in self.sites), None)
        base = getattr(dataset, "dataset", None) if isinstance(dataset, Subset) else None
        if location is not None and base is not None:
            # a new Subset of one dataset at the same site once the last one was iterated (a
            # curriculum's growing pool, a fresh sample each epoch): the same loader built again.
            # Built before any was iterated, they are different loaders (train and validation
            # splits through one helper).
            view_key = (location, "subset", id(base), *_settings(observation)[2:])
            earlier = self.sites.get(view_key)
            if stats is None and earlier is not None and earlier.observation.epochs_started:
                stats = earlier
            keys.append(view_key)
        if stats is not None:
            stats.observation.loaders_built += 1
        else:
            stats = _LoaderStats(observation)
        for key in keys:
            self.sites.setdefault(key, stats)
        self.loaders[id(loader)] = stats
        return stats

    def _read_worker_cpu(self, stats: _LoaderStats, iterator) -> None:
        """The CPU time the workers spent building the batches delivered since the last read
        (from the batch after their first on: start-up left out): how much work a batch is,
        whatever share of a core the workers got on a busy machine."""
        pids = _worker_pids(iterator)
        clock = stats.clock if stats.clock is not None and stats.clock.pids == pids else None
        if clock is not None:
            clock.batches += 1
            if stats.worker_cpu_batches >= CPU_READ_ALWAYS and clock.batches < CPU_READ_EVERY:
                return
        cpu_s = _workers_cpu_s(pids)
        if cpu_s is None:
            return
        if clock is not None:
            stats.worker_cpu_s += max(0.0, cpu_s - clock.cpu_s)
            stats.worker_cpu_batches += clock.batches
        stats.clock = _WorkerClock(pids, cpu_s)

    def _count_batch(self, state: _EpochState, waited: float) -> None:
        observation = state.stats.observation
        observation.batches += 1
        observation.wait_s += waited
        if state.first:
            observation.worker_startup_s.append(time.perf_counter() - state.started)
            state.first = False
        if self.session.training_context():
            state.stats.train_votes += 1
        else:
            state.stats.eval_votes += 1

    def stop(self) -> None:
        # handed to the what-if probes (diagnose/whatif), which release them after the run
        self.retired, self._alive = self._alive, []

    def contribute(self, run, measured) -> None:
        unique = {id(stats): stats for stats in self.loaders.values()}  # loaders built again
        for stats in unique.values():
            observation = stats.observation
            if stats.items:
                observation.item_s = (stats.fetch_s - stats.collate_s) / stats.items
            if stats.fetches:
                observation.collate_s = stats.collate_s / stats.fetches
                # the typical fetch, not the mean: an epoch's short last batch is not the size
                observation.samples_per_batch = counted_median(stats.fetch_sizes.items())
            if stats.collates_weighed:
                observation.collate_bytes = stats.collate_bytes // stats.collates_weighed
            if stats.worker_cpu_batches:
                observation.worker_cpu_s = stats.worker_cpu_s / stats.worker_cpu_batches
            if stats.train_votes or stats.eval_votes:
                observation.role = "train" if stats.train_votes >= stats.eval_votes else "eval"
            run.loaders.append(observation)
