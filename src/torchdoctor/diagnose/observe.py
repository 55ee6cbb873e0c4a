"""Assemble the RunObservation after the run: measured steps, each probe's part, notes."""

from __future__ import annotations

import math

from torchdoctor.diagnose.observations import PHASES, RunObservation, StepObservation
from torchdoctor.diagnose.session import Session
from torchdoctor.diagnose.step_analysis import evaluation_is_acting
from torchdoctor.diagnose.steps import StepRecord, counted_median


def _loss_value(loss) -> float | None:
    if loss is None:
        return None
    try:
        return float(loss)
    except (RuntimeError, ValueError):
        return None


def _median_rows(record: StepRecord) -> int | None:
    """Median rows of the step's training forwards; an input of one dimension is one sample
    (an RL observation vector without a batch dimension), not a batch of its length."""
    return counted_median(
        (f.batch_size if f.shape is not None and len(f.shape) > 1 else 1, f.count)
        for f in record.training_forwards
        if f.batch_size
    )


def _input_elements(record: StepRecord) -> int | None:
    """Elements of the step's training forwards' first inputs, summed (from their shapes)."""
    counted = [(f.shape, f.count) for f in record.training_forwards if f.shape is not None]
    return sum(math.prod(shape) * count for shape, count in counted) if counted else None


def _step(record: StepRecord) -> StepObservation:
    phases = {phase: record.phases.get(phase, 0.0) for phase in PHASES}
    return StepObservation(
        index=record.index,
        wall_s=record.wall,
        phases=phases,
        batch_size=record.batch_size,
        micro_batches=record.micro_batches,
        training_forwards=sum(f.count for f in record.training_forwards),
        training_forward_rows=_median_rows(record),
        training_input_elements=_input_elements(record),
        syncs=int(record.counters.get("syncs", 0)),
        loss=_loss_value(record.loss),
        start_s=record.start,
        host_reads=int(record.counters.get("host_reads", 0)),
        evaluation_s=record.eval_seconds,
        cpu_share=record.cpu_share,
        compiles=record.compiles,
        phase_spans=list(record.spans),
    )


def build_run(
    session: Session,
    target: str,
    argv: list[str],
    status: str,
    exit_code: int,
    error: str | None,
) -> RunObservation:
    """Call after `session.uninstall()`: probes read torch state, their patches are gone."""
    all_steps = session.tracker.steps
    measured = session.measured_steps()
    warm_only = not measured and bool(all_steps)
    if warm_only:
        measured = list(all_steps)  # better warm-up timings than none; the notes say so
    manual = bool(all_steps) and not session.optimizer_stepped
    if status == "completed" and not all_steps:
        status = "no_training_loop"
    run = RunObservation(
        target=target,
        argv=list(argv),
        status=status,
        exit_code=exit_code,
        error=error,
        warmup_steps=0 if warm_only else min(session.first_measured, len(all_steps)),
        steps=[_step(r) for r in measured],
        manual_updates=manual,
        warmup_only=warm_only,
        backwards_seen=session.tracker.backwards,
        training_s_seen=session.tracker.train_seconds,
        forwards_seen=session.tracker.forwards_seen,
    )
    for probe in session.probes:
        probe.contribute(run, measured)
    sampled = session.sampled_index
    if run.compute.ops_per_step is not None:
        for step in run.steps:
            if step.index == sampled:
                step.ops = int(run.compute.ops_per_step)
    run.notes[:0] = _notes(session, run, all_steps, warm_only)
    from torchdoctor.diagnose.whatif import release_program_objects, run_whatifs

    try:
        if session.config.whatif:
            run_whatifs(session, run, session.config.whatif_budget_s)
    finally:
        release_program_objects(session)
    return run


def _notes(session: Session, run: RunObservation, all_steps, warm_only: bool) -> list[str]:
    notes = []
    requested = session.config.steps
    # no step at all: no note, the verdict says why (from backwards_seen and forwards_seen)
    if all_steps and warm_only:
        notes.append(
            f"only {len(all_steps)} step(s) ran, all of them warm-up: the timings include "
            "start-up costs (use a longer run or a smaller --warmup)"
        )
    elif all_steps:
        counted = ""
        if run.compute.ops_per_step is not None:
            counted = f" (the op and FLOP counts come from warm-up step {session.sampled_index})"
        notes.append(
            f"measured {len(run.steps)} step(s) after {run.warmup_steps} warm-up step(s){counted}"
        )
        if requested and len(run.steps) < requested and run.status != "stopped":
            notes.append(f"the run ended after {len(run.steps)} of {requested} requested steps")
        if session.tracker.dropped:
            ran = max(0, session.tracker.index - session.first_measured)
            notes.append(
                f"{ran} steps were measured; the report keeps the last {len(run.steps)} "
                "(bounded memory)"
            )
    if session.stop_reason:
        notes.append(f"whole-cycle mode stopped the program: {session.stop_reason}")
    if run.manual_updates and session.step_in_one_graph:
        notes.append(
            "the optimizer's step runs inside a graph compiled with torch.compile(fullgraph=True),"
            " where no hook of ours runs: a step ends at each backward(), and the optimizer's "
            "time is counted in 'other'"
        )
    elif run.manual_updates:
        notes.append("no torch.optim optimizer stepped: a step ends at each backward()")
    if run.status == "crashed":
        notes.append(f"the script crashed: {run.error}; the report covers the steps before it")
    if run.status == "interrupted":
        how = "Ctrl-C" if run.error == "KeyboardInterrupt" else run.error
        notes.append(f"interrupted ({how}): the report covers the steps before it")
    if any(loader.num_workers for loader in run.loaders):
        notes.append(
            "DataLoader worker processes are not probed: dataset, collate and torch.tensor() "
            "calls inside workers are not timed (the main process's waits are)"
        )
    if not run.loaders and all_steps and run.queue_waits:
        notes.append(
            "no DataLoader seen: the waits on a queue the program's own producer fills are the "
            "data time"
        )
    elif not run.loaders and all_steps:
        notes.append("no DataLoader seen: batches came from elsewhere, data wait is not separated")
    if not run.models and all_steps:
        notes.append("no nn.Module with parameters was called: model time is counted as other")
    if run.evaluation.forwards and evaluation_is_acting(run):
        notes.append(
            f"{run.evaluation.forwards} acting forward(s) (the policy picking actions in the "
            "environment loop; their outputs never got a gradient) and their time "
            f"({run.evaluation.seconds:.2f} s, from the first to the last forward of each run of "
            "them: the environment's steps between them too) were timed apart from the update "
            "steps"
        )
    elif run.evaluation.forwards:
        notes.append(
            f"{run.evaluation.forwards} evaluation forward(s) (outputs never got a gradient) and "
            f"their time ({run.evaluation.seconds:.2f} s, from the first to the last forward of "
            "each run of them, plus waits for evaluation loaders) were left out of the steps"
        )
    return notes
