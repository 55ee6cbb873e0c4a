"""`torch.tensor(ndarray)` probe: copies that `torch.from_numpy` / `torch.as_tensor` would avoid.

`torch.tensor` is replaced by a thin wrapper that only looks at its first argument's type; the
time is taken only for ndarray inputs, lists of ndarrays and lists of lists (rows of numbers). Calls
made inside DataLoader worker processes happen in
other processes and are not seen (the notes say so when workers were used).

`torch.tensor` is one of the constructors a `with torch.device(...)` block redirects, and torch
lists them once, lazily, by name (`torch.utils._device._device_constructors`): listed while our
wrapper stood in `torch`, the real builtin was missing from the list and the block no longer
applied to it. Hugging Face `from_pretrained` tells its meta-device construction by
`torch.tensor([]).device`; it then initialised the non-persistent buffers on meta and left
BERT's `position_ids` as uninitialised memory (a config-built BERT crashed only under diagnose).
The list is made before we patch.
"""

from __future__ import annotations

import sys
import time

import torch
import torch.utils._device

from torchdoctor.diagnose.callsite import user_location
from torchdoctor.diagnose.observations import TensorCreationObservation
from torchdoctor.diagnose.probes.base import Probe, per_step
from torchdoctor.intercept.patching import dynamo_compiling, transforming

# a list's first item of these exact types: a row of Python numbers, which is none of the kinds
# timed (an ndarray, a list of ndarrays, rows of rows)
_NUMBERS = frozenset((float, int, bool))


class TensorCreationProbe(Probe):
    def install(self, patcher) -> None:
        self.locations: dict[str, int] = {}
        self.row_locations: dict[str, int] = {}
        device_constructors = getattr(torch.utils._device, "_device_constructors", None)
        if device_constructors is not None:  # torch >= 2.0; cached: lists the builtin, not ours
            device_constructors()
        patcher.replace(torch, "tensor", self._wrap)

    def _wrap(self, original):
        probe = self
        modules = sys.modules

        # the kind of `data` is read here, not in a method: an RL loop makes a tensor of each
        # observation (`torch.tensor(state)`, a list of floats), dozens a step. Only dynamo's
        # test comes before it (dynamo must never see the probe's code); the rest of
        # transforming() (jit.trace, export: they record the op whatever Python calls it) waits
        # for a tensor made from an ndarray, the one kind timed
        def tensor(data, *args, **kwargs):
            if dynamo_compiling():
                return original(data, *args, **kwargs)
            first = data[0] if isinstance(data, (list, tuple)) and data else None
            if type(first) in _NUMBERS:  # one row of numbers (an RL observation): not timed
                return original(data, *args, **kwargs)
            numpy = modules.get("numpy")
            if numpy is not None and isinstance(data, numpy.ndarray):
                kind = "from_ndarray"
            elif numpy is not None and isinstance(first, numpy.ndarray):
                kind = "from_ndarray_list"
            elif isinstance(first, (list, tuple)):
                kind = "from_nested_list"  # rows of Python numbers, converted one by one
            else:
                return original(data, *args, **kwargs)
            if transforming():
                return original(data, *args, **kwargs)
            started = time.perf_counter()
            try:
                return original(data, *args, **kwargs)
            finally:
                counters = probe.tracker.counters
                counters[kind] = counters.get(kind, 0) + 1
                elapsed = time.perf_counter() - started
                counters["ndarray_s"] = counters.get("ndarray_s", 0) + elapsed
                location = user_location(2)
                # rows of numbers apart: a hot line that builds the rows (a tokenizer in the
                # comprehension) is not the creation's to explain, as an ndarray's copy is
                seen = probe.row_locations if kind == "from_nested_list" else probe.locations
                seen[location] = seen.get(location, 0) + 1

        return tensor

    def contribute(self, run, measured) -> None:
        run.tensor_creation = TensorCreationObservation(
            from_ndarray=round(per_step(measured, "from_ndarray")),
            from_ndarray_list=round(per_step(measured, "from_ndarray_list")),
            from_nested_list=round(per_step(measured, "from_nested_list")),
            seconds_per_step=per_step(measured, "ndarray_s"),
            locations=sorted(self.locations, key=lambda k: -self.locations[k])[:10],
            row_locations=sorted(self.row_locations, key=lambda k: -self.row_locations[k])[:10],
        )
