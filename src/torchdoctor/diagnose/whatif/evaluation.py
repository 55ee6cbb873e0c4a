"""What-if: the program's evaluation forward as it ran it (autograd on, or the model left in
train mode) vs under `torch.inference_mode()` in eval mode, on a copy of the model and the real
batch it trained on; for train mode also how much the outputs change."""

from __future__ import annotations

import torch

from torchdoctor.diagnose.observations import WhatIfTiming
from torchdoctor.diagnose.probes.base import first_tensor
from torchdoctor.diagnose.whatif.guard import compare, compute_clock
from torchdoctor.diagnose.whatif.replay import Replay


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


def _compare(replay: Replay, name: str, as_run, fix, setting: str, allowance_s: float):
    """One timing: the forward as the program ran it vs with the fix, interleaved, in CPU time
    where that is the fairer clock: on a busy machine wall time measured a ratio near 1 at random
    (0.71-1.05 where CPU time gave 0.46-0.82 on the same script)."""
    device = replay.device_type
    return compare(
        name,
        "evaluation forward",
        setting,
        (as_run, fix),
        device,
        allowance_s,
        compute_clock(device),
    )


def measure_evaluation(
    replay: Replay, with_grad: bool, in_train_mode: bool, allowance_s: float
) -> list[WhatIfTiming]:
    timings = []
    share = allowance_s / (2 if with_grad and in_train_mode else 1)
    if with_grad:
        timings.append(
            _compare(
                replay,
                "evaluation.inference_mode",
                _forward_with_autograd(replay),
                _forward_under_inference_mode(replay),
                "model.eval() + torch.inference_mode()",
                share,
            )
        )
    if in_train_mode:
        timing = _compare(
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
