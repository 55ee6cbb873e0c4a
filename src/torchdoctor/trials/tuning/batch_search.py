"""The largest batch size that fits: double until the first failure, then bisect.

`fits(batch_size) -> bool` runs one probe (a few real training steps) and reports whether it
completed without running out of memory. The answer keeps a safety margin below the largest size
that fit, because fragmentation and longer runs need headroom that a short probe does not show.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


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
