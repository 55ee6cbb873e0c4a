"""Host-device sync probe: reads of tensor values on the host, by kind and user call site.

`.item()`, `.tolist()`, `.numpy()`, `.cpu()`, `bool()`, `float()`, `int()` of a CUDA tensor and
`torch.cuda.synchronize()` stall the host until the device catches up. The same reads of CPU
tensors cost nothing of that kind; they are kept apart (device "cpu") and only recorded when the
user's own code made them (directly, or by formatting a tensor in an f-string or print), so
torch's internal reads of CPU scalars (optimizer step counts, ...) stay out of the report.
"""

from __future__ import annotations

import sys

import torch

from torchdoctor.diagnose.callsite import _library_code, is_library_file, user_location
from torchdoctor.diagnose.observations import SyncSite
from torchdoctor.diagnose.probes.base import Probe

_METHODS = {
    "item": "item",
    "tolist": "tolist",
    "numpy": "numpy",
    "cpu": "cpu",
    "__bool__": "bool",
    "__float__": "float",
    "__int__": "int",
}


def _called_from_user(depth: int) -> bool:
    code = sys._getframe(depth).f_code
    library = _library_code.get(code)
    if library is None:
        library = _library_code[code] = is_library_file(code.co_filename)
    return not library


class SyncProbe(Probe):
    def install(self, patcher) -> None:
        self.sites: dict[tuple[str, str, str], list[int]] = {}  # key -> [all, measured]
        for method, kind in _METHODS.items():
            patcher.replace(torch.Tensor, method, partial_wrap(self, kind))
        if torch.cuda.is_available():
            patcher.replace(torch.cuda, "synchronize", self._wrap_synchronize)

    def record(self, kind: str, device: str) -> None:
        key = (kind, user_location(3), device)
        counts = self.sites.get(key)
        if counts is None:
            counts = self.sites[key] = [0, 0]
        counts[0] += 1
        if self.session.measuring:
            counts[1] += 1
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

    def contribute(self, run, measured) -> None:
        steps = len(measured) or 1
        use_measured = any(counts[1] for counts in self.sites.values())
        for (kind, location, device), (total, in_measured) in self.sites.items():
            count = in_measured if use_measured else total
            if count:
                run.sync_sites.append(SyncSite(kind, location, count, count / steps, device))
        run.sync_sites.sort(key=lambda s: -s.count)


def partial_wrap(probe: SyncProbe, kind: str):
    def make(original):
        def read(tensor, *args, **kwargs):
            device = tensor.device.type
            if device != "cpu" or (
                kind != "cpu" and (_called_from_user(2) or probe.session.formatting_tensor)
            ):
                probe.record(kind, device)
            return original(tensor, *args, **kwargs)

        return read

    return make
