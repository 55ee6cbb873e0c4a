"""`--try auto`: try only the fixes the measured phases can pay back.

A fix can at best remove the time of the phases it shortens (`SHORTENS` in each fix module:
"data", "h2d", "forward", "backward", "optimizer", "evaluation", or "step" for all of it). The
diagnosis measured each phase's share of the training step, and evaluation's share of training
plus evaluation (the step phases count for the training part of the run); `auto` takes the
fixes the diagnosis recommends (as `all` does) and sets aside those whose phases take less than
MIN_PAYBACK of the run, with the measured share as the reason:
no autocast trial on a data-bound script whose model is 5% of the step. Trials of such a fix
would cost runs to measure a gain below the run-to-run noise.
"""

from __future__ import annotations

from torchdoctor.diagnose.rules._common import evaluation_share
from torchdoctor.trials.fixes import get_fix

MIN_PAYBACK = 0.10


def payback_share(fix_name: str, diagnosis) -> float:
    """The largest share of the run the fix could give back: its phases' measured share of the
    run (training steps plus evaluation: the step phases' shares scaled by the training part,
    as the diagnosis states its savings and the trials time whole cycles)."""
    phases = get_fix(fix_name).SHORTENS
    if "step" in phases:
        return 1.0
    evaluation = evaluation_share(diagnosis.run)
    share = (1.0 - evaluation) * sum(diagnosis.breakdown.get(phase, 0.0) for phase in phases)
    if "evaluation" in phases:
        share += evaluation
    return min(1.0, share)


def worth_trying(names: list[str], diagnosis) -> tuple[list[str], dict[str, str]]:
    """(fixes to try, {fix: why it is skipped}) for `--try auto`."""
    kept, skipped = [], {}
    for name in names:
        share = payback_share(name, diagnosis)
        if share >= MIN_PAYBACK:
            kept.append(name)
        else:
            phases = " + ".join(get_fix(name).SHORTENS)
            skipped[name] = (
                f"auto: {phases} took {100 * share:.0f}% of the measured run, "
                f"below the {100 * MIN_PAYBACK:.0f}% it must be able to give back"
            )
    return kept, skipped
