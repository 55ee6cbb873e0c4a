"""What-if: the program's `collate_fn` vs a whole-batch collate on the same samples (rule D111's
fix). A side loader over a private copy of the dataset fetches K batches of samples once; each
candidate (torch's `default_collate`, then one padding variable-length tensors with
`pad_sequence`, padding 0) collates every one of them, and only a candidate that returns the very
batches the program's collate_fn builds is timed against it, in interleaved rounds of CPU time
(both run in this thread: another process's load is not the collate's doing). None returns the
same batches: nothing is claimed, and the rule keeps its estimate."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import torch
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, default_collate

from torchdoctor.diagnose.observations import WhatIfTiming
from torchdoctor.diagnose.whatif.batched_fetch import same_batch
from torchdoctor.diagnose.whatif.data import side_loader, side_run_unsupported
from torchdoctor.diagnose.whatif.guard import compute_clock, interleaved_medians

BATCHES = 4  # sample lists collated per timed call, at most
ROUNDS_AT_LEAST = 4  # interleaved_medians' warm-up call and its 3 rounds at least


def unsupported(loader: DataLoader) -> str:
    """Why the loader's collate cannot be timed against a whole-batch one ("" when it can)."""
    if loader.num_workers:
        return "a loader with workers (its collate runs beside the step)"
    if loader.collate_fn is default_collate:
        return "the default collate already"
    return side_run_unsupported(loader, 1)


def padded_collate(samples: list) -> Any:
    """`default_collate`, except that tensors of one field whose first dimension differs
    (sequences) are padded with zeros to the longest by one `pad_sequence`."""
    first = samples[0]
    if isinstance(first, torch.Tensor) and first.dim() >= 1:
        ragged = any(s.shape != first.shape for s in samples)
        if ragged and all(s.shape[1:] == first.shape[1:] for s in samples):
            return pad_sequence(samples, batch_first=True, padding_value=0)
    if isinstance(first, (tuple, list)) and all(len(s) == len(first) for s in samples):
        return [padded_collate(list(field)) for field in zip(*samples, strict=True)]
    if isinstance(first, dict):
        return {key: padded_collate([s[key] for s in samples]) for key in first}
    return default_collate(samples)


CANDIDATES: tuple[tuple[str, Callable[[list], Any]], ...] = (
    ("torch's default_collate", default_collate),
    ("default_collate with pad_sequence (padding 0) for variable-length tensors", padded_collate),
)


def _sample_lists(loader: DataLoader, batches: int) -> list[list]:
    """The samples of the first `batches` batches, as the program's collate_fn receives them."""
    side = side_loader(loader, 0, collate_fn=list)
    iterator = iter(side)
    return [next(iterator) for _ in range(min(batches, len(side)))]


def _returns_same(collate: Callable[[list], Any], programs: list, lists: list[list]) -> bool:
    try:
        return all(same_batch(p, collate(s)) for p, s in zip(programs, lists, strict=True))
    except Exception:  # the candidate cannot collate these samples
        return False


def measure(loader: DataLoader, allowance_s: float) -> list[WhatIfTiming]:
    """Seconds per batch of the program's collate_fn vs the first candidate that returns the
    same batches (nothing when none does)."""
    lists = _sample_lists(loader, BATCHES)
    program = loader.collate_fn
    started = time.perf_counter()
    programs = [program(lists[0])]
    # a warm-up and at least 3 interleaved rounds of the program's collate fit the allowance
    fits = int(allowance_s / (ROUNDS_AT_LEAST * max(time.perf_counter() - started, 1e-6)))
    lists = lists[: max(1, min(len(lists), fits))]
    programs += [program(samples) for samples in lists[1:]]
    same = [(name, c) for name, c in CANDIDATES if _returns_same(c, programs, lists)]
    if not same:
        return []
    setting, candidate = same[0]
    medians, rounds = interleaved_medians(
        {
            "as run": lambda: [program(samples) for samples in lists],
            "whole-batch": lambda: [candidate(samples) for samples in lists],
        },
        "cpu",
        allowance_s,
        compute_clock("cpu"),
    )
    return [
        WhatIfTiming(
            name="data.collate",
            unit="batch",
            as_run_s=medians["as run"] / len(lists),
            alternative_s=medians["whole-batch"] / len(lists),
            repeats=rounds,
            setting=setting,
        )
    ]
