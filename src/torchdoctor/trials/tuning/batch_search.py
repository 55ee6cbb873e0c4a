"""The largest batch size that fits: double until the first failure, then bisect.

`fits(batch_size) -> bool` runs one probe (a few real training steps) and reports whether it
completed without running out of memory. The answer keeps a safety margin below the largest size
that fit, because fragmentation and longer runs need headroom that a short probe does not show.

When the batch the user asked for does not fit, the global batch is kept: the micro-batch is
lowered to what fits (with the margin) and gradient accumulation raised to make up the rest
(`plan_accumulation`), so the optimizer sees the same number of samples per update.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

# An exact split (micro-batch x accumulation == global batch) is preferred unless it needs more
# than this many times the fewest accumulation steps (a prime global batch would need micro-batch
# 1); then the micro-batch is rounded up and the effective batch is slightly larger.
EXACT_SPLIT_MAX_STEPS = 2


@dataclass
class BatchSearchResult:
    largest_fit: int | None  # largest batch size that ran (None: not even `start` fit)
    first_failure: int | None  # smallest size seen to fail (None: hit `limit` first)
    recommended: int | None  # largest_fit scaled by the margin
    margin: float
    limit: int
    probes: list[tuple[int, bool]] = field(default_factory=list)  # (batch size, fit) in order

    @property
    def memory_bound(self) -> bool:
        return self.first_failure is not None


def find_max_batch(
    fits: Callable[[int], bool], start: int = 1, limit: int = 65536, margin: float = 0.9
) -> BatchSearchResult:
    if start < 1 or limit < start or not 0 < margin <= 1:
        raise ValueError("need 1 <= start <= limit and 0 < margin <= 1")
    probes: list[tuple[int, bool]] = []

    def probe(size: int) -> bool:
        ok = fits(size)
        probes.append((size, ok))
        return ok

    low, high = None, None  # low fits, high fails
    size = start
    while True:
        if probe(size):
            low = size
            if size == limit:
                break
            size = min(size * 2, limit)
        else:
            high = size
            break
    if low is None:
        return BatchSearchResult(None, high, None, margin, limit, probes)
    while high is not None and high - low > 1:
        middle = (low + high) // 2
        if probe(middle):
            low = middle
        else:
            high = middle
    recommended = max(1, int(low * margin))
    return BatchSearchResult(low, high, recommended, margin, limit, probes)


@dataclass
class AccumulationPlan:
    global_batch: int  # samples per optimizer update the user asked for
    micro_batch: int  # samples per forward/backward: fits, with the margin
    accumulate: int  # micro-batches per optimizer update

    @property
    def effective_batch(self) -> int:
        return self.micro_batch * self.accumulate


def plan_accumulation(global_batch: int, max_micro_batch: int) -> AccumulationPlan:
    """The fewest accumulation steps whose micro-batch is at most `max_micro_batch`, splitting
    the global batch exactly when that costs at most EXACT_SPLIT_MAX_STEPS x the fewest steps."""
    if global_batch < 1 or max_micro_batch < 1:
        raise ValueError("batch sizes must be at least 1")
    fewest = math.ceil(global_batch / max_micro_batch)
    for accumulate in range(fewest, EXACT_SPLIT_MAX_STEPS * fewest + 1):
        if global_batch % accumulate == 0:
            return AccumulationPlan(global_batch, global_batch // accumulate, accumulate)
    return AccumulationPlan(global_batch, math.ceil(global_batch / fewest), fewest)
