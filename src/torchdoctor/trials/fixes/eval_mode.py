"""Run evaluation forwards with the model in `eval()` mode.

An evaluation left in train mode lets Dropout drop units and BatchNorm normalise with (and
update) the batch's statistics: the validation numbers are noisier and wrong, and BatchNorm's
running statistics drift with every validation batch. The fix switches the root model to
`eval()` for each evaluation forward (autograd off, or a line the diagnosis saw evaluate; see
inference_mode.py) and back to its mode afterwards; autograd is left as the script set it. The
training losses must not change; where validation updated BatchNorm statistics they do (the
trial then says so), which is the bug the fix removes.
"""

from __future__ import annotations

from torchdoctor.trials.fixes.inference_mode import evaluation_detector

NAME = "eval_mode"
SUMMARY = "model.eval() around evaluation forwards (model.train() after)"
TOLERANCE = 1e-6
TOLERANCE_REASON = "training steps must be untouched: evaluation is not part of the loss"
# Evaluation in eval() mode draws no Dropout masks: the global generator's stream shifts, and
# the training masks after it differ (trials.semantics: "random draws differ", not "changed").
SKIPS_DROPOUT_DRAWS = True
FINDING_CODES = ("D302",)
PERMANENT = """\
model.eval()
with torch.inference_mode():
    output = model(inputs)
model.train()"""


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
