"""Samples and micro-batches of a training step, from its forwards, backwards and updates.

A step's backward() calls are grouped by the optimizer update they fed: k backwards before one
update are gradient accumulation (micro-batches add up), while each optimizer of a GAN-style
iteration updates on the same batch (counted once).
"""

from __future__ import annotations

from bisect import bisect_left


def per_update(backward_ends: list[float], update_ends: list[float]) -> list[list[float]]:
    """The step's backward() end times, grouped by the optimizer update they fed: one group per
    update (k backwards: gradient accumulation; a GAN's D and G updates: one each)."""
    if len(backward_ends) == 1 and len(update_ends) == 1 and backward_ends[0] <= update_ends[0]:
        return [[backward_ends[0]]]  # the usual step (this runs at every step close)
    groups: list[list[float]] = []
    updates = iter(sorted(update_ends))
    update_end = next(updates, float("inf"))
    current: list[float] = []
    for end in backward_ends:
        while end > update_end:  # this backward feeds a later update
            if current:
                groups.append(current)
            current, update_end = [], next(updates, float("inf"))
        current.append(end)
    if current:
        groups.append(current)
    return groups


def batch_size(training: list, groups: list[list[float]]) -> int | None:
    """Samples in the step: per backward, the largest training forward before it, summed over an
    update's backwards; the largest of the updates. `training`: the step's training forwards in
    call order (their start times ascending, as the tracker records them).

    Gradient accumulation (forward, backward, k times, one update) sums its micro-batches;
    several forwards feeding one backward (a GAN's discriminator on real and fake, a siamese
    pair) count once; several optimizers updating on the same batch (a GAN's D and G steps of
    one iteration) see it once each.
    """
    if len(training) == 1:  # the usual step (this runs at every step close)
        return training[0].batch_size
    sizes = [f.batch_size for f in training]
    if not sizes or None in sizes:
        return None
    # the forwards before a backward are a run of the list from the first one not yet counted:
    # found by bisection, not by a pass per backward (an RL episode: dozens of forwards a step)
    starts = [f.t0 for f in training]
    samples_per_update = []
    first = 0
    for group in groups:
        samples = 0
        for end in group:
            stop = bisect_left(starts, end, first)
            if stop > first:
                samples += max(sizes[first:stop])
                first = stop
        samples_per_update.append(samples)
    if not any(samples_per_update):  # no backward() (torch.autograd.grad): the largest forward
        return max(sizes)
    return max(samples_per_update)
