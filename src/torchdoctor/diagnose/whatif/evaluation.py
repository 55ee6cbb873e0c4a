"""What-if: the program's evaluation forward as it ran it (autograd on, or the model left in
train mode) vs under `torch.inference_mode()` in eval mode, on a copy of the model and the real
batch it trained on; for train mode also how much the outputs change."""

from __future__ import annotations

import statistics
from collections.abc import Callable

import torch

from torchdoctor.diagnose.observations import WhatIfTiming
from torchdoctor.diagnose.probes.base import first_tensor
from torchdoctor.diagnose.whatif.allocator import fault_share, mixed, with_handed_back
from torchdoctor.diagnose.whatif.guard import (
    MIN_ROUNDS,
    clock_name,
    compute_clock,
    interleaved_samples,
    paired_ratio,
    timed,
)
from torchdoctor.diagnose.whatif.replay import Replay, taken_at_batch

# CPU or wall seconds one timed call takes at least: single 1.3 ms forwards of an MLP, medians
# of each side over 3-11 rounds, gave 0.48-1.12 for a ratio of 0.83-0.92 (load 7-10; the trial
# gained 0.84 of the evaluation); 4 ms calls and the rounds' paired ratios 0.85-0.95
MIN_TIMED_S = 0.004
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


def fewest_forwards(with_grad: bool, in_train_mode: bool) -> int:
    """The fewest evaluation forwards `measure_evaluation` runs, as its floor in the plan: the
    resized replay's trial forward, then per timing a warm-up and MIN_ROUNDS rounds of both sides
    (one forward a call at the least), and the two forwards of the train mode's output change."""
    timings = int(with_grad) + int(in_train_mode)
    return 1 + timings * 2 * (MIN_ROUNDS + 1) + (2 if in_train_mode else 0)


def evaluation_replay(replay: Replay, batch: int | None) -> Replay:
    """The replay at the evaluation's batch, where the model takes it (`taken_at_batch`)."""
    return taken_at_batch(replay, batch)


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


def timed_forwards(
    replay: Replay,
    name: str,
    as_run,
    fix,
    setting: str,
    allowance_s: float,
    program_faults: float | None = None,
) -> WhatIfTiming:
    """One timing: the forward as the program ran it vs with the fix, interleaved, in CPU time
    where that is the fairer clock: on a busy machine wall time measured a ratio near 1 at random
    (0.71-1.05 where CPU time gave 0.46-0.82 on the same script). Short forwards are timed
    several to a call; the times stated are per forward, the fix's at the median over the rounds
    of its time over the forward's as run in the same round (`paired_ratio`). Where the
    program's forwards page-faulted, `program_faults` pages each (their freed activations went
    back to the system), the forward as run is also timed from memory handed back and the two
    mixed in the share of the faults the program paid (whatif/allocator.py); one forward a call
    then (the memory is handed back before each)."""
    device = replay.device_type
    faults = fault_share(as_run, device, program_faults)
    calls = 1 if faults is not None else calls_per_timing(as_run, device)
    clock = compute_clock(device)
    variants, prepare = with_handed_back(
        {"as run": repeated(as_run, calls), "fix": repeated(fix, calls)}, "as run", faults
    )
    samples, rounds = interleaved_samples(variants, device, allowance_s, clock, prepare)
    samples = mixed(samples, "as run", faults)

    as_run_s = statistics.median(samples["as run"]) / calls
    return WhatIfTiming(
        name=name,
        unit="evaluation forward",
        as_run_s=as_run_s,
        alternative_s=as_run_s * paired_ratio(samples, "fix", "as run"),
        repeats=rounds,
        setting=setting,
        clock=clock_name(clock),
        started_from=faults.started_from("forwards") if faults is not None else "",
    )


def measure_evaluation(
    replay: Replay,
    with_grad: bool,
    in_train_mode: bool,
    allowance_s: float,
    batch: int | None = None,
    with_grad_faults: float | None = None,
) -> list[WhatIfTiming]:
    """The evaluation fixes timed on the replay at the evaluation's `batch` (None: the training
    batch's); `with_grad_faults`: the page faults of the program's autograd-on evaluation
    forwards, each (`timed_forwards`)."""
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
                with_grad_faults,
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
