"""TD127: autograd anomaly detection switched on for the training."""

from __future__ import annotations

from torchdoctor.lint.patterns import argument
from torchdoctor.lint.rule import Rule
from torchdoctor.lint.switches import guarded, truth, under_named_switch

_SET = "torch.autograd.set_detect_anomaly"
_CONTEXT = ("torch.autograd.detect_anomaly", "torch.autograd.anomaly_mode.detect_anomaly")


class AnomalyDetectionOn(Rule):
    """
    ## What it does
    Flags `torch.autograd.set_detect_anomaly(True)` and `torch.autograd.detect_anomaly()`, and
    `set_detect_anomaly(cfg.debug)` where the file gives that setting a default of `True`
    (`debug: bool = True`, `"debug": True`, `kwargs.get("debug", True)`,
    `add_argument("--debug", default=True)`) and nowhere passes it `False`. A call under an `if` whose condition names
    anomaly detection itself (`if args.detect_anomaly:`) is an explicit opt-in and is left alone,
    as is one under an `if` that the file's defaults do not make true (a switch the user sets).

    ## Why is this bad
    Anomaly mode is a debugging aid: it records a traceback for every operation of every forward
    and checks every backward's outputs for NaN, which makes each training step several times
    slower. Switched on while chasing a NaN, it is easily left on for the whole training.

    ## Example
    ```python
    torch.autograd.set_detect_anomaly(True)  # while chasing a NaN
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
    ```

    ## Use instead
    ```python
    torch.autograd.set_detect_anomaly(args.detect_anomaly)  # off unless asked for
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
    ```

    ## Fix safety
    No automatic fix: whether the program still needs the check is the author's decision.
    """

    code = "TD127"
    name = "anomaly-detection-on"

    def check(self, ctx):
        for call in ctx.calls_to(_SET, *_CONTEXT):
            mode = argument(call, "mode", 0)
            if mode is None and ctx.call_name(call) == _SET:
                continue
            if mode is not None and truth(ctx, mode) is not True:
                continue
            if under_named_switch(ctx, call, "anomal") or guarded(ctx, call):
                continue
            yield ctx.violation(
                self,
                call,
                "autograd anomaly detection slows every step several times; switch it off "
                "once the NaN is found",
            )
