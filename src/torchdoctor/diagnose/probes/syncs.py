"""Host-device sync probe: reads of tensor values on the host, by kind and user call site.

`.item()`, `.tolist()`, `.numpy()`, `.cpu()`, `bool()`, `float()`, `int()` of a CUDA tensor and
`torch.cuda.synchronize()` stall the host until the device catches up. The same reads of CPU
tensors cost nothing of that kind; they are kept apart (device "cpu") and only recorded when the
user's own code made them (directly, or by formatting a tensor in an f-string or print) outside
the DataLoader's next() (a dataset's or collate_fn's reads are data-pipeline work), so torch's
internal reads of CPU scalars (optimizer step counts, ...) stay out of the report.
"""

from __future__ import annotations

import bisect
import time

import torch

from torchdoctor.diagnose.callsite import called_from_user, user_location
from torchdoctor.diagnose.observations import SyncSite
from torchdoctor.diagnose.probes.base import Probe
from torchdoctor.intercept.patching import transforming, unpatched_tensor_method

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
        self.sites: dict[tuple[str, str, str], list[int]] = {}  # key -> [all, measured]
        self.timed_reads: list[tuple[float, list[int]]] = []  # (time, counts) of measured reads
        for method, kind in _METHODS.items():
            patcher.replace(torch.Tensor, method, partial_wrap(self, method, kind))
        if torch.cuda.is_available():
            patcher.replace(torch.cuda, "synchronize", self._wrap_synchronize)

    def in_data_pipeline(self) -> bool:
        """Inside the DataLoader's next() (a dataset's or collate_fn's own reads of CPU tensors:
        data-pipeline work, timed as data, not a step's host reads)."""
        stack = self.tracker.stack
        return bool(stack) and stack[-1] == "data"

    def record(self, kind: str, device: str) -> None:
        key = (kind, user_location(3), device)
        counts = self.sites.get(key)
        if counts is None:
            counts = self.sites[key] = [0, 0]
        counts[0] += 1
        if self.session.measuring:
            counts[1] += 1
            if len(self.timed_reads) < MAX_TIMED_READS:
                self.timed_reads.append((time.perf_counter(), counts))
        counters = self.tracker.counters
        counters["host_reads"] = counters.get("host_reads", 0) + 1
        if device != "cpu":
            counters["syncs"] = counters.get("syncs", 0) + 1

    def _wrap_synchronize(self, original):
        probe = self

        def synchronize(*args, **kwargs):
            probe.record("synchronize", "cuda")
            return original(*args, **kwargs)

        return synchronize

    def _leave_out_evaluation(self) -> None:
        """Reads made in evaluation windows (validation metrics) are not per-step syncs."""
        spans = sorted(self.tracker.evaluation_windows())
        starts = [start for start, _ in spans]
        for at, counts in self.timed_reads:
            i = bisect.bisect_right(starts, at) - 1
            if i >= 0 and at <= spans[i][1]:
                counts[1] -= 1
        self.timed_reads = []

    def contribute(self, run, measured) -> None:
        use_measured = any(counts[1] for counts in self.sites.values())
        self._leave_out_evaluation()
        steps = len(measured) or 1
        for (kind, location, device), (total, in_measured) in self.sites.items():
            count = in_measured if use_measured else total
            if count:
                run.sync_sites.append(SyncSite(kind, location, count, count / steps, device))
        run.sync_sites.sort(key=lambda s: -s.count)


def partial_wrap(probe: SyncProbe, method: str, kind: str):
    def make(original):
        def read(tensor, *args, **kwargs):
            if transforming():
                return unpatched_tensor_method(method)(tensor, *args, **kwargs)
            device = tensor.device.type
            if device != "cpu" or (
                kind != "cpu"
                and not probe.in_data_pipeline()
                and (called_from_user(2) or probe.session.formatting_tensor)
            ):
                probe.record(kind, device)
            return original(tensor, *args, **kwargs)

        return read

    return make
