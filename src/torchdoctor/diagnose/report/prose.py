"""The words of the report: the verdict line and the step-spread note, written from the data the
builder chose (report/verdict.py, diagnose/step_analysis.py). Every renderer shows these."""

from __future__ import annotations

from torchdoctor.diagnose.report.verdict import Bound, NoSteps, TopLine, Unexplained, Verdict
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


def children_text(no_steps: NoSteps) -> str:
    ran = ", ".join(no_steps.child_targets[:3]) or "?"
    return (
        f"no training loop seen in this process: it started {no_steps.children} child "
        f"process(es) through multiprocessing (running {ran}), which diagnose does not follow; "
        "training there is not measured. To diagnose it, run one worker's function as a script "
        "of its own, or for DDP launch one process per rank with `torchrun ... -m torchdoctor "
        "diagnose --rank-dir DIR script.py`"
    )


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
    if no_steps.why == "budget_in_evaluation":
        return (
            f"no training step measured: the --budget ran out while the program evaluated "
            f"({no_steps.forwards} model forward pass(es) without autograd) before its first "
            "training step; rerun with a longer --budget, or --steps N, to measure past it"
        )
    if no_steps.children and not no_steps.backwards:
        return children_text(no_steps)
    return no_training_loop_text(no_steps.backwards, no_steps.forwards)


HOW_TO_LOOK = {
    "data": "time the dataset's __getitem__ and collate_fn (python -m cProfile -s cumtime), or "
    "open --trace FILE to see each step's data wait",
    "h2d": "rerun with --profile to see the copy ops, or open --trace FILE",
    "compute": "rerun with --profile to name the most expensive ops",
    "other": "it is the code between the model, backward and optimizer calls: open --trace FILE "
    "to see each step's phases, or python -m cProfile -s cumtime to name the functions",
}


def top_line_text(line: TopLine) -> str:
    return f"top line: {line.location} `{line.code}` ({pct(line.share)} of step time)"


def unexplained_text(gap: Unexplained, line: TopLine | None = None) -> str:
    """Where the dominant part went when no rule explains it: the line profile's top line when it
    named one, else how to look."""
    if line is not None:
        lead = (
            "; no rule explains it"
            if gap.explained <= 0
            else (f"; the findings account for ~{pct(gap.explained)} of those {pct(gap.share)}")
        )
        return f"{lead}; {top_line_text(line)}"
    if gap.explained > 0:
        return (
            f"; the findings account for ~{pct(gap.explained)} of those {pct(gap.share)}, no rule "
            f"explains the rest: {HOW_TO_LOOK[gap.kind]}"
        )
    return f"; no rule explains it: {HOW_TO_LOOK[gap.kind]}"


def verdict_text(verdict: Verdict) -> str:
    if verdict.bound is None:
        return no_steps_text(verdict.no_steps or NoSteps("no_training_loop"))
    words = bound_text(verdict.bound)
    if verdict.evaluation_share is not None and verdict.evaluation_is_acting:
        words = (
            f"acting-heavy: {pct(verdict.evaluation_share)} of the measured time was the policy "
            "acting in the environment loop (forwards without gradient that pick actions, and "
            "the code between them), timed apart from the update steps; within the update steps, "
            f"{words}"
        )
    elif verdict.evaluation_share is not None:
        words = (
            f"evaluation-heavy: {pct(verdict.evaluation_share)} of the measured time ran forwards "
            "whose outputs never got a gradient, or waited for their loaders (validation, or "
            f"acting/inference inside the loop), and is left out of the steps; within the steps, "
            f"{words}"
        )
    if verdict.unexplained is not None:
        words += unexplained_text(verdict.unexplained, verdict.top_line)
    if verdict.top_fix is not None:
        top = verdict.top_fix
        basis = "measured" if top.basis == "measured" else "estimate"
        words += f"; top fix: {top.title} (~{pct(top.saving)} of run time, {basis})"
    if verdict.top_line is not None and verdict.unexplained is None:
        words += "; " + top_line_text(verdict.top_line)
    if verdict.ended:
        words = f"[{verdict.ended} after {verdict.measured_steps} measured steps] " + words
    return words


def spread_note(spread: StepSpread) -> str:
    median_ms, slowest_ms = 1000 * spread.median_s, 1000 * spread.slowest_s
    text = (
        f"{spread.outliers} of {spread.steps} steps took over {OUTLIER_FACTOR:.0f}x the median "
        f"step, more than their input explains (slowest {slowest_ms:.1f} ms, {spread.slowest_s / spread.median_s:.0f}x the "
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
