"""Evaluate under `torch.inference_mode()` with the model in `eval()` mode (seed 001, XV.1).

Evaluation forwards that record autograd graphs waste time and memory, and evaluating in train
mode lets Dropout drop units and BatchNorm use (and update) batch statistics. A root-model
forward is treated as evaluation when it runs with autograd disabled (`no_grad`), or when the
diagnosis saw forwards from that line never followed by `backward()`. Such forwards run in eval
mode under inference mode; outputs are cloned out of inference mode so later code can use them.
If the script relies on train-mode behaviour there (e.g. a no_grad "teacher" forward with
Dropout that feeds the training loss), the loss trajectory changes and the trial says so.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

import torch

import torchdoctor
from torchdoctor.intercept.hooks import map_tensors
from torchdoctor.techniques import finding_codes_for_fix

NAME = "inference_mode"
SUMMARY = "model.eval() + torch.inference_mode() for evaluation forwards"
TOLERANCE = 1e-6
TOLERANCE_REASON = "training steps must be untouched: evaluation is not part of the loss"
FINDING_CODES = finding_codes_for_fix(NAME)  # from the technique registry
# what the fix can shorten (`--try auto` skips it when these take little of the run)
SHORTENS = ("evaluation",)
PERMANENT = """\
model.eval()
with torch.inference_mode():
    output = model(inputs)
model.train()"""

# torch's and torchdoctor's own frames (the hook chain in intercept/ too) are not the caller
_OWN_DIRS = tuple(
    os.path.dirname(os.path.abspath(module.__file__)) + os.sep
    for module in (torch, torchdoctor)
    if module.__file__
)


def applies_to(run) -> bool:
    if run is None or not run.evaluation.forwards:
        return False
    evaluation = run.evaluation
    return (
        evaluation.with_grad > 0
        or evaluation.in_train_mode > 0
        or (evaluation.under_inference_mode < evaluation.forwards)
    )


def caller_location() -> str:
    """'path:line' of the first frame outside torch and torchdoctor (the user's call)."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_OWN_DIRS):
        frame = frame.f_back
    return "" if frame is None else f"{frame.f_code.co_filename}:{frame.f_lineno}"


def _matches(location: str, known: list[str]) -> bool:
    """The diagnosis writes locations short (relative to the working directory, or a file
    name), the caller's frame has the absolute path: same line, and one path ends the other."""
    path, _, line = location.rpartition(":")
    path = path.replace(os.sep, "/")
    for k in known:
        known_path, _, known_line = k.rpartition(":")
        known_path = known_path.replace(os.sep, "/")
        if known_line == line and (path == known_path or path.endswith("/" + known_path)):
            return True
    return False


def evaluation_detector(hooks) -> Callable[[], bool]:
    """`evaluating()`: is the root forward starting now an evaluation forward? Autograd off, or
    called from a line the diagnosis saw evaluate (forwards never followed by backward())."""
    known = list(hooks.observation.evaluation.locations) if hooks.observation else []

    def evaluating() -> bool:
        return not torch.is_grad_enabled() or bool(known and _matches(caller_location(), known))

    return evaluating


def apply(hooks) -> None:
    evaluating = evaluation_detector(hooks)

    def forward(module, call, args, kwargs):
        if torch.is_inference_mode_enabled() or not evaluating():
            return call(module, args, kwargs)
        hooks.mark_used(NAME)
        # a model the script already put in eval() is left alone: switching every layer twice
        # per forward cost more than autograd on a small model (bench/calibration.py, D301)
        was_training = module.training
        if was_training:
            module.eval()
        try:
            with torch.inference_mode():
                output = call(module, args, kwargs)
        finally:
            if was_training:
                module.train(True)
        return map_tensors(output, torch.Tensor.clone)

    hooks.around_forward.append(forward)
