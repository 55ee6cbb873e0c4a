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

A dataset may also draw from a generator of its own (`self.rng = np.random.default_rng(1)`,
`random.Random(0)`, a `torch.Generator`), an attribute of the dataset or of an object it holds (a
transform). Each worker then draws from its own copy of that generator: the same numbers in every
worker (torch reseeds only the global generators), in another order than the baseline's single
stream. That is also where the draws are made, not what is computed, so the probe snapshots those
generators' states around the fetch too (`owned_generators`).
"""

from __future__ import annotations

import os
import random
import sys
import tempfile
import types
from collections.abc import Iterator

import torch
from torch.utils.data._utils import fetch

# how far into a dataset's attributes its own generators are looked for: the dataset's, and those
# of the objects it holds (a transform, a wrapped dataset); a cap keeps a fetch's cost small
GENERATOR_DEPTH = 2
MAX_ATTRIBUTES = 200


def _generator_state(value: object) -> object | None:
    """The state of a random generator object (None: not one)."""
    if isinstance(value, random.Random):
        return value.getstate()
    if isinstance(value, torch.Generator):
        return value.get_state()
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        if isinstance(value, numpy.random.Generator):
            return repr(value.bit_generator.state)
        if isinstance(value, numpy.random.RandomState):
            return value.get_state()[1].tobytes()
    return None


def owned_generators(dataset: object) -> Iterator[object]:
    """The random generator objects a dataset holds: its attributes and, GENERATOR_DEPTH deep,
    the attributes of the objects it holds (at most MAX_ATTRIBUTES looked at)."""
    seen: set[int] = set()
    level, looked = [dataset], 0
    for _ in range(GENERATOR_DEPTH):
        deeper = []
        for holder in level:
            if id(holder) in seen or looked >= MAX_ATTRIBUTES:
                continue
            seen.add(id(holder))
            attributes = getattr(holder, "__dict__", None)
            if not isinstance(attributes, dict):
                continue
            for value in list(attributes.values())[: MAX_ATTRIBUTES - looked]:
                looked += 1
                if _generator_state(value) is not None:
                    yield value
                elif hasattr(value, "__dict__") and not isinstance(
                    value, type | types.ModuleType | torch.Tensor
                ):
                    deeper.append(value)
        level = deeper


def _states(dataset: object) -> tuple:
    numpy = sys.modules.get("numpy")
    numpy_state = numpy.random.get_state()[1].tobytes() if numpy is not None else None
    owned = [_generator_state(g) for g in owned_generators(dataset)]
    return random.getstate(), numpy_state, torch.get_rng_state(), owned


def _same_state(a: object, b: object) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return torch.equal(a, b)
    return a == b


def _same(before: tuple, after: tuple) -> bool:
    return (
        before[0] == after[0]
        and before[1] == after[1]
        and torch.equal(before[2], after[2])
        and len(before[3]) == len(after[3])
        and all(_same_state(a, b) for a, b in zip(before[3], after[3], strict=True))
    )


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
            dataset = getattr(fetcher, "dataset", None)
            before = _states(dataset)
            batch = original(fetcher, *args, **kwargs)
            if not _same(before, _states(dataset)):
                probe._drew_here = True
                if os.getpid() != probe._pid:  # a loader worker: tell the training process
                    with open(probe._marker, "a", encoding="utf-8"):
                        pass
            return batch

        return fetch
