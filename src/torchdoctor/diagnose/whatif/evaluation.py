"""What-if: the program's evaluation forward as it ran it (autograd on, or the model left in
train mode) vs under `torch.inference_mode()` in eval mode, on a copy of the model and the real
batch it trained on; for train mode also how much the outputs change."""

from __future__ import annotations

from collections.abc import Callable

import torch

from torchdoctor.diagnose.observations import WhatIfTiming
from torchdoctor.diagnose.probes.base import first_tensor
from torchdoctor.diagnose.whatif.guard import compare, compute_clock, timed
from torchdoctor.diagnose.whatif.replay import Replay, at_batch

MIN_TIMED_S = 0.001  # CPU or wall seconds one timed call takes at least
MAX_CALLS = 20  # forwards per timed call


def _forward_with_autograd(replay: Replay):
    def run() -> None:
        with torch.enable_grad():
            replay.model.eval()
            replay.forward()

    return run


def _forward_under_inference_mode(replay: Replay, train_mode: bool = False):
    def run() -> None:
        with torch.inference_mode():
            replay.model.train(train_mode)
            replay.forward()

    return run


def _output_change(replay: Replay) -> float | None:
    """Relative L2 difference between the train-mode and the eval-mode outputs."""
    with torch.inference_mode():
        replay.model.train()
        in_train = first_tensor(replay.forward())
        replay.model.eval()
        in_eval = first_tensor(replay.forward())
    if in_train is None or in_eval is None or not in_eval.is_floating_point():
        return None
    if in_train.shape != in_eval.shape:
        return None
    reference = float(in_eval.float().norm())
    difference = float((in_train.float() - in_eval.float()).norm())
    return difference / reference if reference > 0 else None


def evaluation_replay(replay: Replay, batch: int | None) -> Replay:
    """The replay at the evaluation's batch (`at_batch`), or as it is where the model refuses
    the resized inputs (an input whose first dimension only happened to equal the batch)."""
    resized = at_batch(replay, batch)
    if resized is replay:
        return replay
    try:
        with torch.inference_mode():
            resized.forward()
    except Exception:  # noqa: BLE001  # the program's model: any error means "not this batch"
        return replay
    return resized


def calls_per_timing(work: Callable[[], object], device_type: str) -> int:
    """Forwards per timed call, so that one takes MIN_TIMED_S at least: a forward of a few
    hundred microseconds timed alone swung 0.8-1.3x between runs on a busy machine."""
    once = timed(work, device_type, compute_clock(device_type))
    return max(1, min(MAX_CALLS, int(MIN_TIMED_S / max(once, 1e-6)) + 1))


def repeated(work: Callable[[], object], calls: int) -> Callable[[], None]:
    def run() -> None:
        for _ in range(calls):
            work()

    return run


def timed_forwards(replay: Replay, name: str, as_run, fix, setting: str, allowance_s: float):
    """One timing: the forward as the program ran it vs with the fix, interleaved, in CPU time
    where that is the fairer clock: on a busy machine wall time measured a ratio near 1 at random
    (0.71-1.05 where CPU time gave 0.46-0.82 on the same script). Short forwards are timed
    several to a call; the times stated are per forward."""
    device = replay.device_type
    calls = calls_per_timing(as_run, device)
    timing = compare(
        name,
        "evaluation forward",
        setting,
        (repeated(as_run, calls), repeated(fix, calls)),
        device,
        allowance_s,
        compute_clock(device),
    )
    timing.as_run_s /= calls
    timing.alternative_s /= calls
    return timing


def measure_evaluation(
    replay: Replay,
    with_grad: bool,
    in_train_mode: bool,
    allowance_s: float,
    batch: int | None = None,
) -> list[WhatIfTiming]:
    """The evaluation fixes timed on the replay at the evaluation's `batch` (None: the training
    batch's)."""
    replay = evaluation_replay(replay, batch)
    timings = []
    share = allowance_s / (2 if with_grad and in_train_mode else 1)
    if with_grad:
        timings.append(
            timed_forwards(
                replay,
                "evaluation.inference_mode",
                _forward_with_autograd(replay),
                _forward_under_inference_mode(replay),
                "model.eval() + torch.inference_mode()",
                share,
            )
        )
    if in_train_mode:
        timing = timed_forwards(
            replay,
            "evaluation.eval_mode",
            _forward_under_inference_mode(replay, train_mode=True),
            _forward_under_inference_mode(replay),
            "model.eval()",
            share,
        )
        timing.output_change = _output_change(replay)
        timings.append(timing)
    replay.model.train()
    return timings
