"""Run evaluation forwards with the model in `eval()` mode.

An evaluation left in train mode lets Dropout drop units and BatchNorm normalise with (and
update) the batch's statistics: the validation numbers are noisier and wrong, and BatchNorm's
running statistics drift with every validation batch. The fix switches the root model to
`eval()` for each evaluation forward (autograd off, or a line the diagnosis saw evaluate; see
inference_mode.py) and back to its mode afterwards; autograd is left as the script set it. The
training losses must not change (train-mode BatchNorm normalises with the batch's statistics,
whatever the running ones). With Dropout they do: the evaluation no longer draws masks from the
global generator, so every later training mask differs and the trial says "changed" although
only the random stream moved (a known limit, shared with inference_mode).
"""

from __future__ import annotations

from torchdoctor.techniques import finding_codes_for_fix
from torchdoctor.trials.fixes.inference_mode import evaluation_detector

NAME = "eval_mode"
SUMMARY = "model.eval() around evaluation forwards (model.train() after)"
TOLERANCE = 1e-6
TOLERANCE_REASON = "only evaluation forwards change mode: the training losses must not move"
FINDING_CODES = finding_codes_for_fix(NAME)  # from the technique registry
# what the fix can shorten (`--try auto` skips it when these take little of the run)
SHORTENS = ("evaluation",)
PERMANENT = "model.eval()  # before the validation loop; model.train() after it"


def applies_to(run) -> bool:
    return run is not None and run.evaluation.in_train_mode > 0


def apply(hooks) -> None:
    evaluating = evaluation_detector(hooks)

    def forward(module, call, args, kwargs):
        if not module.training or not evaluating():
            return call(module, args, kwargs)
        hooks.mark_used(NAME)
        module.eval()
        try:
            return call(module, args, kwargs)
        finally:
            module.train(True)

    hooks.around_forward.append(forward)
