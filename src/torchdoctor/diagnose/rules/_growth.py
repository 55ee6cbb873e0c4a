"""Trends of a quantity against the step index (rules D503 and D504): a least-squares line, and
the robust statistics a noisy timing needs (Theil-Sen slope, Mann-Kendall trend test)."""

from __future__ import annotations

import math

from torchdoctor.diagnose.step_analysis import median


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


def theil_sen(xs: list[float], ys: list[float]) -> tuple[float, float] | None:
    """(slope, intercept) of the Theil-Sen line: the median of the slopes between every pair of
    points, through the median of y - slope x. One slow point (a preemption) moves it little,
    where it can tip a least-squares line; None with fewer than two distinct x."""
    slopes = [
        (ys[j] - ys[i]) / (xs[j] - xs[i])
        for i in range(len(xs))
        for j in range(i + 1, len(xs))
        if xs[j] != xs[i]
    ]
    if not slopes:
        return None
    slope = median(slopes)
    return slope, median([y - slope * x for x, y in zip(xs, ys)])


def kendall_z(xs: list[float], ys: list[float]) -> float:
    """Mann-Kendall trend statistic: (concordant - discordant pairs) over its standard deviation
    when y does not depend on x (ties ignored). Above 2.33, a rise this consistent comes by
    chance less than once in a hundred runs of points in random order."""
    n = len(xs)
    if n < 3:
        return 0.0
    s = sum(_sign((xs[j] - xs[i]) * (ys[j] - ys[i])) for i in range(n) for j in range(i + 1, n))
    return s / math.sqrt(n * (n - 1) * (2 * n + 5) / 18)


def residual_spread(xs: list[float], ys: list[float], slope: float, intercept: float) -> float:
    """Robust standard deviation (1.4826 x median absolute deviation) of the points around a
    line: how far a point strays by noise alone."""
    return 1.4826 * median([abs(y - slope * x - intercept) for x, y in zip(xs, ys)])


def _sign(value: float) -> int:
    return (value > 0) - (value < 0)
