"""A straight-line fit of a quantity against the step index (rules D503 and D504)."""

from __future__ import annotations

import math


def linear_trend(xs: list[float], ys: list[float]) -> tuple[float, float] | None:
    """(slope, correlation) of the least-squares line through the points; None when flat in x
    or y (no trend to speak of)."""
    n = len(xs)
    if n < 2:
        return None
    mean_x, mean_y = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mean_x) ** 2 for x in xs)
    syy = sum((y - mean_y) ** 2 for y in ys)
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys))
    if sxx <= 0 or syy <= 0:
        return None
    return sxy / sxx, sxy / math.sqrt(sxx * syy)
