"""The words of the report: the verdict line and the step-spread note, written from the data the
builder chose (report/verdict.py, diagnose/step_analysis.py). Every renderer shows these."""

from __future__ import annotations

from torchdoctor.diagnose.report.verdict import Bound, NoSteps, Verdict
from torchdoctor.diagnose.step_analysis import OUTLIER_FACTOR, StepSpread


def pct(share: float) -> str:
    return f"{100 * share:.0f}%"


def bound_text(bound: Bound) -> str:
    share = pct(bound.share)
    if bound.kind == "data":
        return f"data-loading bound: {share} of step time waiting for batches"
    if bound.kind == "h2d":
        return f"transfer bound: {share} of step time copying batches to the device"
    if bound.kind == "other" and not bound.model_seen:
        return (
            f"host-overhead bound: {share} of step time outside data loading, backward and "
            "optimizer; no nn.Module call was seen (model.forward() called directly, or raw "
            "tensor math), so the model's own forward time is counted here too"
        )
    if bound.kind == "other":
        return (
            f"host-overhead bound: {share} of step time outside data, model and optimizer "
            "(batch preparation, logging, metrics, checkpoints)"
        )
    parts = ", ".join(f"{p} {pct(s)}" for p, s in bound.compute_shares.items())
    return f"compute bound: {share} of step time in the model ({parts})"


def no_training_loop_text(backwards: int, forwards: int) -> str:
    if backwards:
        return (
            f"no training step completed: backward() ran {backwards} time(s) but no optimizer step"
        )
    what = f"{forwards} model forward pass(es) but no backward()" if forwards else "no model call"
    return f"no training loop seen: no backward() or optimizer step ({what})"


def no_steps_text(no_steps: NoSteps) -> str:
    if no_steps.why == "warmup_only":
        why = "use a longer run or a smaller --warmup"
        if no_steps.status == "crashed":
            why = f"the script crashed: {no_steps.error}"
        elif no_steps.status == "interrupted":
            why = "interrupted"
        return f"too few steps to measure: {no_steps.steps_run} ran, all warm-up ({why})"
    if no_steps.why == "crashed":
        return f"no training step measured: the script crashed first ({no_steps.error})"
    if no_steps.why == "interrupted":
        return "no training step measured: interrupted before the first step ended"
    return no_training_loop_text(no_steps.backwards, no_steps.forwards)


def verdict_text(verdict: Verdict) -> str:
    if verdict.bound is None:
        return no_steps_text(verdict.no_steps or NoSteps("no_training_loop"))
    words = bound_text(verdict.bound)
    if verdict.evaluation_share is not None:
        words = (
            f"evaluation-heavy: {pct(verdict.evaluation_share)} of the measured time ran forwards "
            "whose outputs never got a gradient, or waited for their loaders (validation, or "
            f"acting/inference inside the loop), and is left out of the steps; within the steps, "
            f"{words}"
        )
    if verdict.top_fix is not None:
        top = verdict.top_fix
        words += f"; top fix: {top.title} (~{pct(top.saving)} of step time)"
    if verdict.ended:
        words = f"[{verdict.ended} after {verdict.measured_steps} measured steps] " + words
    return words


def spread_note(spread: StepSpread) -> str:
    median_ms, slowest_ms = 1000 * spread.median_s, 1000 * spread.slowest_s
    text = (
        f"{spread.outliers} of {spread.steps} steps took over {OUTLIER_FACTOR:.0f}x the median "
        f"step (slowest {slowest_ms:.1f} ms, {spread.slowest_s / spread.median_s:.0f}x the "
        f"median {median_ms:.1f} ms)"
    )
    if spread.compiled_steps:  # a known cause: say it instead of guessing
        text += (
            f"; torch.compile compiled new code during step(s) "
            f"{', '.join(map(str, spread.compiled_steps))} (a new input shape such as a smaller "
            "last batch: drop_last=True or torch.compile(dynamic=True); or a train/eval switch)"
        )
    if not spread.left_out:
        return f"step times vary widely: {text}; the breakdown averages all steps"
    why = (
        ""
        if spread.all_compiled
        else " (a preemption, or a periodic cost such as a checkpoint? measure more --steps to tell)"
    )
    return f"{text}: left out of the breakdown{why}"
