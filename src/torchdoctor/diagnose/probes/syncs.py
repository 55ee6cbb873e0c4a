"""Host-device sync probe: reads of tensor values on the host, by kind and user call site.

`.item()`, `.tolist()`, `.numpy()`, `.cpu()`, `bool()`, `float()`, `int()` of a CUDA tensor and
`torch.cuda.synchronize()` stall the host until the device catches up. The same reads of CPU
tensors cost nothing of that kind; they are kept apart (device "cpu") and only recorded when the
user's own code made them (directly, or by formatting a tensor in an f-string or print) outside
the DataLoader's next() (a dataset's or collate_fn's reads are data-pipeline work), so torch's
internal reads of CPU scalars (optimizer step counts, ...) stay out of the report.

Each recorded read in a measured step is also timed (one clock read either side of a call that is
already wrapped): on CUDA the wait for the device's queue plus the copy, on CPU the conversion
itself. Reads made while formatting a tensor for a log line are counted but not timed here: the io
probe times the whole formatting (rule D702).
"""

from __future__ import annotations

import bisect
import sys
import time

import torch

from torchdoctor.diagnose.callsite import (
    _library_code,
    is_library_code,
    is_own_line,
    user_location,
)
from torchdoctor.diagnose.observations import SyncSite
from torchdoctor.diagnose.probes.base import Probe
from torchdoctor.intercept.patching import (
    dynamo_compiling,
    transforming,
    unpatched_tensor_method,
)

_METHODS = {
    "item": "item",
    "tolist": "tolist",
    "numpy": "numpy",
    "cpu": "cpu",
    "__bool__": "bool",
    "__float__": "float",
    "__int__": "int",
}


MAX_TIMED_READS = 200_000  # measured reads kept with their time (to cut evaluation out)


class SyncProbe(Probe):
    def install(self, patcher) -> None:
        # key -> [all, measured, seconds in the measured reads]
        self.sites: dict[tuple[str, str, str], list[float]] = {}
        # each measured read (to cut evaluation out): its start, its site's counts and its
        # seconds, in three flat lists, not an object a read: a program that reads a value at
        # every action makes dozens a step, and objects that outlive the step (a list holds a
        # reference) make the garbage collector run, its full collections too, where the plain
        # run allocates none (an RL loop: 1 ms a step; docs/benchmarks.md, overhead round 12)
        self.read_starts: list[float] = []
        self.read_sites: list[list[float]] = []
        self.read_seconds: list[float] = []
        # (code, instruction offset, kind) of a read made by the program's own line -> its
        # site's counts: the same read again (`int(action)` at every action of an RL loop) is
        # counted without finding its line again
        self.own_sites: dict[tuple, list[float]] = {}
        for method, kind in _METHODS.items():
            patcher.replace(torch.Tensor, method, partial_wrap(self, method, kind))
        if torch.cuda.is_available():
            patcher.replace(torch.cuda, "synchronize", self._wrap_synchronize)

    def site(self, kind: str, device: str, depth: int = 4) -> list[float]:
        """The counts of the read's site (the program's line `depth` frames up, from here)."""
        key = (kind, user_location(depth), device)
        counts = self.sites.get(key)
        if counts is None:
            # [all, measured, seconds in the measured reads, read the loader's batch]
            counts = self.sites[key] = [0, 0, 0.0, False]
        return counts

    def count(self, counts: list[float], device: str) -> float | None:
        """Count a read of the site `counts`. In a measured step, keep it and return its start,
        the time `done` is told; None: not measured, or made while formatting a tensor for a log
        line (the io probe times the formatting: kept with no seconds of its own)."""
        counts[0] += 1
        counters = self.tracker.counters
        counters["host_reads"] = counters.get("host_reads", 0) + 1
        if device != "cpu":
            counters["syncs"] = counters.get("syncs", 0) + 1
        if not self.session.measuring:
            return None
        return self.count_measured(counts)

    def count_measured(self, counts: list[float]) -> float | None:
        """`count`'s part for a read in a measured step (counted already)."""
        counts[1] += 1
        start = time.perf_counter()
        if len(self.read_starts) < MAX_TIMED_READS:
            self.read_starts.append(start)
            self.read_sites.append(counts)
            if self.session.formatting_tensor:
                self.read_seconds.append(0.0)
        return None if self.session.formatting_tensor else start

    def timed(self, start: float | None, counts: list[float], original, *args, **kwargs):
        """Run the read, booking its wall time to its site (`start` None: not timed). The
        clock read when the read was counted, just before, is its start: one more read here.
        The call is spelled `original(...)`: an error raised there is the program's
        (intercept.patching.raised_by_the_original), not ours."""
        if start is None:
            return original(*args, **kwargs)
        try:
            return original(*args, **kwargs)
        finally:
            self.done(counts, time.perf_counter() - start)

    def done(self, counts: list[float], seconds: float) -> None:
        """A timed read of the site `counts` took `seconds`."""
        counts[2] += seconds
        if len(self.read_seconds) < len(self.read_starts):  # kept (not past MAX_TIMED_READS)
            self.read_seconds.append(seconds)

    def _wrap_synchronize(self, original):
        probe = self

        def synchronize(*args, **kwargs):
            counts = probe.site("synchronize", "cuda", 3)
            start = probe.count(counts, "cuda")
            return probe.timed(start, counts, original, *args, **kwargs)

        return synchronize

    def _leave_out_evaluation(self) -> None:
        """Reads made in evaluation windows (validation metrics) are not per-step syncs."""
        spans = sorted(self.tracker.evaluation_windows())
        starts = [start for start, _ in spans]
        reads = zip(self.read_starts, self.read_sites, self.read_seconds, strict=True)
        for at, counts, seconds in reads:
            i = bisect.bisect_right(starts, at) - 1
            if i >= 0 and at <= spans[i][1]:
                counts[1] -= 1
                counts[2] -= seconds
        for kept in (self.read_starts, self.read_sites, self.read_seconds):
            kept.clear()  # emptied, not rebound: the read wrappers hold these lists

    def contribute(self, run, measured) -> None:
        use_measured = any(counts[1] for counts in self.sites.values())
        self._leave_out_evaluation()
        steps = len(measured) or 1
        for (kind, location, device), counts in self.sites.items():
            total, in_measured, seconds, loader_batch = counts
            count = int(in_measured if use_measured else total)
            if count:
                seconds = max(0.0, seconds) if use_measured else 0.0
                site = SyncSite(
                    kind,
                    location,
                    count,
                    count / steps,
                    device,
                    seconds / steps,
                    bool(loader_batch),
                )
                run.sync_sites.append(site)
        run.sync_sites.sort(key=lambda s: -s.count)


def _in_loader_batch(tensor: torch.Tensor, batch: list) -> bool:
    """The host tensor shares its memory with a tensor of the DataLoader's latest batch (is it,
    or a view of it: `points.data`, `x[:, :3]`)."""
    if not batch:
        return False
    try:
        memory = tensor.untyped_storage().data_ptr()
        for ref in batch:
            held = ref()
            if held is not None and held.untyped_storage().data_ptr() == memory:
                return True
    except (RuntimeError, NotImplementedError):  # no storage: sparse, nested, a subclass's
        return False
    return False


def partial_wrap(probe: SyncProbe, method: str, kind: str):
    session = probe.session
    library_code = _library_code
    getframe = sys._getframe
    phases = probe.tracker.stack  # the tracker's phase stack (one list for the whole run)
    own_sites = probe.own_sites
    clock = time.perf_counter
    tracker = probe.tracker
    # the measured reads' lists (never rebound)
    read_starts, read_sites, read_seconds = probe.read_starts, probe.read_sites, probe.read_seconds

    def make(original):
        # Most reads of CPU tensors come from torch itself (an optimizer reading its step counts,
        # 256 per AdamW step on 64 layers): they are dismissed first, on the caller's code
        # object alone (`is_cpu` costs a fifth of `device.type`; no method calls on this path).
        # Only dynamo's test comes before (dynamo must never see the frame look-up): jit.trace
        # and export record the op whatever Python calls it, so the rest of transforming() waits
        # for a read we record. Torch's own reads pay two Python calls, not three. Inside the
        # DataLoader's next() (the phase "data"), a dataset's or collate_fn's reads of CPU
        # tensors are data-pipeline work, timed as data, not a step's host reads: they are
        # dismissed before the frame look-up, with no call (a dataset that reads a 0-d tensor per
        # sample, `int(self.targets[i])`, makes hundreds a step).
        def read(tensor, *args, **kwargs):
            if dynamo_compiling():
                return unpatched_tensor_method(method)(tensor, *args, **kwargs)
            if tensor.is_cpu:
                if kind == "cpu" or (phases and phases[-1] == "data"):  # .cpu(): no copy
                    return original(tensor, *args, **kwargs)
                caller = getframe(1)
                code = caller.f_code
                library = library_code.get(code)
                if library is None:
                    library = library_code[code] = is_library_code(code)
                if library and not session.formatting_tensor:
                    return original(tensor, *args, **kwargs)
                if transforming():
                    return unpatched_tensor_method(method)(tensor, *args, **kwargs)
                key = (code, caller.f_lasti, kind)
                del caller
                counts = own_sites.get(key)
                if counts is None:
                    counts = probe.site(kind, "cpu", 3)
                    if is_own_line(*key[:2]):  # the line is the caller itself: fixed per key
                        own_sites[key] = counts
                if not counts[0]:  # a site's first read: what it reads (a line reads one thing)
                    counts[3] = _in_loader_batch(tensor, session.loader_batch)
                # `count` and `done`, spelled out for a CPU read that is recorded (an RL loop's
                # `int(action)` at every action): no device's sync to count, two calls fewer
                counts[0] += 1
                counters = tracker.counters  # the step in progress's
                counters["host_reads"] = counters.get("host_reads", 0) + 1
                if session.formatting_tensor or not session.measuring:
                    start = probe.count_measured(counts) if session.measuring else None
                else:
                    counts[1] += 1
                    start = clock()
                    if len(read_starts) < MAX_TIMED_READS:
                        read_starts.append(start)
                        read_sites.append(counts)
                    try:
                        return original(tensor, *args, **kwargs)
                    finally:
                        seconds = clock() - start
                        counts[2] += seconds
                        if len(read_seconds) < len(read_starts):
                            read_seconds.append(seconds)
            elif transforming():
                return unpatched_tensor_method(method)(tensor, *args, **kwargs)
            else:
                device = tensor.device.type
                counts = probe.site(kind, device, 3)
                start = probe.count(counts, device)
            # `timed`, spelled out: a program may read a value at every step (`loss.item()`)
            # or at every action (`int(action)`)
            if start is None:
                return original(tensor, *args, **kwargs)
            try:
                return original(tensor, *args, **kwargs)
            finally:
                probe.done(counts, clock() - start)

        return read

    return make
