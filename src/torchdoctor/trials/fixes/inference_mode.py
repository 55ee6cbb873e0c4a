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

import torch

from torchdoctor.techniques import finding_codes_for_fix
from torchdoctor.trials.hooks import map_tensors

NAME = "inference_mode"
SUMMARY = "model.eval() + torch.inference_mode() for evaluation forwards"
TOLERANCE = 1e-6
TOLERANCE_REASON = "training steps must be untouched: evaluation is not part of the loss"
FINDING_CODES = finding_codes_for_fix(NAME)  # from the technique registry
PERMANENT = """\
model.eval()
with torch.inference_mode():
    output = model(inputs)
model.train()"""

_OWN_DIRS = tuple(
    os.path.dirname(module.__file__) + os.sep for module in (torch,) if module.__file__
) + (os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,)


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
    path, _, line = location.rpartition(":")
    return any(k == location or k == f"{os.path.basename(path)}:{line}" for k in known)


def apply(hooks) -> None:
    known = list(hooks.observation.evaluation.locations) if hooks.observation else []

    def forward(module, call, args, kwargs):
        if torch.is_inference_mode_enabled():
            return call(module, args, kwargs)
        evaluating = not torch.is_grad_enabled() or (known and _matches(caller_location(), known))
        if not evaluating:
            return call(module, args, kwargs)
        hooks.mark_used(NAME)
        was_training = module.training
        module.eval()
        try:
            with torch.inference_mode():
                output = call(module, args, kwargs)
        finally:
            module.train(was_training)
        return map_tensors(output, torch.Tensor.clone)

    hooks.around_forward.append(forward)
