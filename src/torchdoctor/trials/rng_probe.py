"""Does building a batch draw from the global random generators (random augmentation)?

With `num_workers=0` the dataset's `__getitem__` and the `collate_fn` run in the training process
and draw from its global Python / NumPy / torch generators. With workers they run in worker
processes, which torch seeds differently (base seed + worker id), so the draws differ: the losses
of a `workers` trial then differ from the baseline's although the fix changes nothing about what
is learned. The probe wraps the dataset fetch (`__getitem__` + collate) and records whether any
global generator's state moved across it, in the training process only (worker processes inherit
the wrapper but their flag is never read). The sampler's shuffling draw is outside the fetch: the
order is drawn in the training process in both cases.
"""

from __future__ import annotations

import os
import random
import sys

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
        self.drew = False  # some batch built in the training process drew random numbers
        self._pid = os.getpid()

    def attach(self, hooks) -> None:
        for fetcher in (fetch._MapDatasetFetcher, fetch._IterableDatasetFetcher):
            hooks.set_attribute(fetcher, "fetch", self._wrap(fetcher.fetch))

    def _wrap(self, original):
        probe = self

        def fetch(fetcher, *args, **kwargs):
            if probe.drew or os.getpid() != probe._pid:  # decided, or in a worker process
                return original(fetcher, *args, **kwargs)
            before = _states()
            batch = original(fetcher, *args, **kwargs)
            probe.drew = not _same(before, _states())
            return batch

        return fetch
