"""What-if: the training forward and backward (the replay) at the program's batch vs at 2x and
4x that batch, the real batch concatenated with itself, timed interleaved. A timing's
`alternative_s` is the larger batch's time divided by the factor: seconds per as many samples as
the program's batch, so `ratio` is the time per sample with the larger batch relative to as run
(rule D202)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from torchdoctor.diagnose.observations import WhatIfTiming
from torchdoctor.diagnose.probes.base import first_tensor
from torchdoctor.diagnose.whatif.guard import clock_name, compute_clock, interleaved_medians
from torchdoctor.diagnose.whatif.replay import Replay, resized

FACTORS = (2, 4)
MEMORY_HEADROOM = 0.9  # of capacity: a larger batch's activations must fit below this
# k times the samples cannot take much less time than the batch as run: a larger batch timed
# below this share of the as-run time was timed through noise (a preempted round, a first-call
# cost), and its per-sample ratio would claim more than the batch could give back
MIN_PLAUSIBLE_TOTAL = 0.8


def factors_that_fit(memory) -> tuple[int, ...]:
    """The FACTORS whose batch fits: the run's peak plus (k - 1) times the activations its step
    saved for backward, below MEMORY_HEADROOM of capacity (process memory against RAM on a CPU,
    the allocator against the GPU). All of them when either is unknown (a MemoryObservation)."""
    peak, capacity = memory.peak_bytes, memory.capacity_bytes
    saved = memory.saved_activation_bytes
    if not peak or not capacity or saved is None:
        return FACTORS
    return tuple(k for k in FACTORS if peak + (k - 1) * saved <= MEMORY_HEADROOM * capacity)


def replay_batch(replay: Replay) -> int | None:
    """The batch of the replayed forward: the first input tensor's first dimension."""
    x = first_tensor(replay.args) if replay.args else first_tensor(replay.kwargs)
    if x is None or x.dim() == 0:
        return None
    return int(x.shape[0])


SEQUENCE_FIRST_TYPES = (
    torch.nn.RNNBase,
    torch.nn.Transformer,
    torch.nn.TransformerEncoderLayer,
    torch.nn.TransformerDecoderLayer,
)


def sequence_first(model: torch.nn.Module) -> bool:
    """Does the model hold a recurrent or transformer layer left at batch_first=False? Then the
    inputs' first dimension is likely time, and repeating it lengthens sequences instead of
    adding samples."""
    for module in model.modules():
        if not isinstance(module, SEQUENCE_FIRST_TYPES):
            continue
        # a transformer layer keeps the setting on its attention
        holder = module.self_attn if hasattr(module, "self_attn") else module
        if not getattr(holder, "batch_first", True):
            return True
    return False


def measure_batch(
    replay: Replay, batch: int, allowance_s: float, factors: tuple[int, ...] = FACTORS
) -> list[WhatIfTiming]:
    """One timing per factor whose larger batch took at least MIN_PLAUSIBLE_TOTAL of the time
    as run; `batch` is the program's (micro-)batch, the replay's first input dimension (the
    caller checks: a sequence-first model's is not)."""
    variants: dict[str, Callable[[], object]] = {"as run": replay.forward_backward}
    for factor in factors:
        variants[f"x{factor}"] = resized(replay, batch, batch * factor).forward_backward
    medians, rounds = interleaved_medians(
        variants,
        replay.device_type,
        allowance_s,
        compute_clock(replay.device_type),
        work_scale={f"x{factor}": float(factor) for factor in factors},
    )
    plausible = [f for f in factors if medians[f"x{f}"] >= MIN_PLAUSIBLE_TOTAL * medians["as run"]]
    return [
        WhatIfTiming(
            name=f"batch.x{factor}",
            unit=f"forward and backward of {batch} samples",
            as_run_s=medians["as run"],
            alternative_s=medians[f"x{factor}"] / factor,
            repeats=rounds,
            setting=f"batch_size={factor * batch}",
            batch_factor=factor,
            clock=clock_name(compute_clock(replay.device_type)),
        )
        for factor in plausible
    ]
