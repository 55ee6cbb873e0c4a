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

from torchdoctor.diagnose.callsite import _library_code, is_library_code, user_location
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
        # [time, counts, seconds] of each measured read (to cut evaluation out)
        self.timed_reads: list[list] = []
        for method, kind in _METHODS.items():
            patcher.replace(torch.Tensor, method, partial_wrap(self, method, kind))
        if torch.cuda.is_available():
            patcher.replace(torch.cuda, "synchronize", self._wrap_synchronize)

    def record(self, kind: str, device: str) -> list | None:
        """Count the read; in a measured step, return its entry for `timed` to fill in."""
        key = (kind, user_location(3), device)
        counts = self.sites.get(key)
        if counts is None:
            counts = self.sites[key] = [0, 0, 0.0]
        counts[0] += 1
        counters = self.tracker.counters
        counters["host_reads"] = counters.get("host_reads", 0) + 1
        if device != "cpu":
            counters["syncs"] = counters.get("syncs", 0) + 1
        if not self.session.measuring:
            return None
        counts[1] += 1
        entry = [time.perf_counter(), counts, 0.0]
        if len(self.timed_reads) < MAX_TIMED_READS:
            self.timed_reads.append(entry)
        return entry

    @staticmethod
    def timed(entry: list | None, original, *args, **kwargs):
        """Run the read, booking its wall time to `entry` (None: not a measured read). The
        clock read when the read was recorded, just before, is its start: one more read here.
        The call is spelled `original(...)`: an error raised there is the program's
        (intercept.patching.raised_by_the_original), not ours."""
        if entry is None:
            return original(*args, **kwargs)
        try:
            return original(*args, **kwargs)
        finally:
            spent = time.perf_counter() - entry[0]
            entry[2] = spent
            entry[1][2] += spent

    def _wrap_synchronize(self, original):
        probe = self

        def synchronize(*args, **kwargs):
            return probe.timed(probe.record("synchronize", "cuda"), original, *args, **kwargs)

        return synchronize

    def _leave_out_evaluation(self) -> None:
        """Reads made in evaluation windows (validation metrics) are not per-step syncs."""
        spans = sorted(self.tracker.evaluation_windows())
        starts = [start for start, _ in spans]
        for at, counts, seconds in self.timed_reads:
            i = bisect.bisect_right(starts, at) - 1
            if i >= 0 and at <= spans[i][1]:
                counts[1] -= 1
                counts[2] -= seconds
        self.timed_reads = []

    def contribute(self, run, measured) -> None:
        use_measured = any(counts[1] for counts in self.sites.values())
        self._leave_out_evaluation()
        steps = len(measured) or 1
        for (kind, location, device), (total, in_measured, seconds) in self.sites.items():
            count = int(in_measured if use_measured else total)
            if count:
                seconds = max(0.0, seconds) if use_measured else 0.0
                site = SyncSite(kind, location, count, count / steps, device, seconds / steps)
                run.sync_sites.append(site)
        run.sync_sites.sort(key=lambda s: -s.count)


def partial_wrap(probe: SyncProbe, method: str, kind: str):
    session = probe.session
    library_code = _library_code
    getframe = sys._getframe
    phases = probe.tracker.stack  # the tracker's phase stack (one list for the whole run)
    clock = time.perf_counter

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
                code = getframe(1).f_code
                library = library_code.get(code)
                if library is None:
                    library = library_code[code] = is_library_code(code)
                if library and not session.formatting_tensor:
                    return original(tensor, *args, **kwargs)
                if transforming():
                    return unpatched_tensor_method(method)(tensor, *args, **kwargs)
                entry = probe.record(kind, "cpu")
            elif transforming():
                return unpatched_tensor_method(method)(tensor, *args, **kwargs)
            else:
                entry = probe.record(kind, tensor.device.type)
            # a log line's formatting is timed by the io probe; `timed`, spelled out: a program
            # may read a value at every step (`loss.item()`) or at every action (`int(action)`)
            if entry is None or session.formatting_tensor:
                return original(tensor, *args, **kwargs)
            try:
                return original(tensor, *args, **kwargs)
            finally:
                spent = clock() - entry[0]
                entry[2] = spent
                entry[1][2] += spent

        return read

    return make
