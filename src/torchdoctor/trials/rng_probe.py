"""Does building a batch draw from the global random generators (random augmentation)?

With `num_workers=0` the dataset's `__getitem__` and the `collate_fn` run in the training process
and draw from its global Python / NumPy / torch generators. With workers they run in worker
processes, which torch seeds differently (base seed + worker id), so the draws differ: the losses
of a `workers` trial then differ from the baseline's although the fix changes nothing about what
is learned. The same holds for `persistent_workers` on a loader that already has workers: its
workers keep their generators across epochs instead of being seeded again. The probe wraps the
dataset fetch (`__getitem__` + collate) and records whether any global generator's state moved
across it: in the training process in `drew`, in a forked loader worker (which inherits the
wrapper) by creating a marker file, the one channel that needs nothing from the worker's exit.
The sampler's shuffling draw is outside the fetch: the order is drawn in the training process in
both cases.
"""

from __future__ import annotations

import os
import random
import sys
import tempfile

import torch
from torch.utils.data._utils import fetch


def _states() -> tuple:
    numpy = sys.modules.get("numpy")
    numpy_state = numpy.random.get_state()[1].tobytes() if numpy is not None else None
    return random.getstate(), numpy_state, torch.get_rng_state()


def _same(before: tuple, after: tuple) -> bool:
    return before[0] == after[0] and before[1] == after[1] and torch.equal(before[2], after[2])


class LoaderRandomnessProbe:
    def __init__(self) -> None:
        self._drew_here = False  # a batch built in this process drew random numbers
        self._pid = os.getpid()
        # created by a loader worker whose batch drew random numbers
        self._marker = os.path.join(
            tempfile.gettempdir(), f"torchdoctor-loader-draws-{self._pid}-{id(self)}"
        )

    @property
    def drew(self) -> bool:
        """Some batch, built in the training process or in a loader worker, drew random numbers."""
        return self._drew_here or os.path.exists(self._marker)

    def close(self) -> None:
        """Remove the workers' marker file (`drew` stays as it was read last)."""
        self._drew_here = self.drew
        if os.path.exists(self._marker):
            os.remove(self._marker)

    def attach(self, hooks) -> None:
        for fetcher in (fetch._MapDatasetFetcher, fetch._IterableDatasetFetcher):
            hooks.set_attribute(fetcher, "fetch", self._wrap(fetcher.fetch))

    def _wrap(self, original):
        probe = self

        def fetch(fetcher, *args, **kwargs):
            if probe._drew_here:  # decided in this process
                return original(fetcher, *args, **kwargs)
            before = _states()
            batch = original(fetcher, *args, **kwargs)
            if not _same(before, _states()):
                probe._drew_here = True
                if os.getpid() != probe._pid:  # a loader worker: tell the training process
                    with open(probe._marker, "a", encoding="utf-8"):
                        pass
            return batch

        return fetch
