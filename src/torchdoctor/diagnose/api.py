"""Python API of `torchdoctor diagnose`.

report = diagnose_script("train.py", ["--epochs", "1"], steps=20)
report = diagnose_script(Program("pkg.train", module=True), steps=20)
with torchdoctor.watch() as w:      # in a notebook: diagnose the code in the block
    train(model, loader)
w.report.verdict
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from torchdoctor.diagnose.observe import build_run
from torchdoctor.diagnose.program_exec import replaced_note
from torchdoctor.diagnose.report import Report, build_report
from torchdoctor.diagnose.rules_runner import check_all
from torchdoctor.diagnose.runner import run_program
from torchdoctor.diagnose.session import DiagnoseConfig, Session
from torchdoctor.errors import UsageError
from torchdoctor.intercept.hooks import Hooks
from torchdoctor.program import Program, as_program

__all__ = ["Report", "diagnose_script", "watch", "Watch"]

RANK_WAIT_S = 60.0  # how long rank 0 waits for the other ranks' observations


def _check_counts(steps: int | None, warmup: int) -> None:
    if steps is not None and steps < 0:
        raise UsageError(f"--steps must be 0 or more, got {steps}")
    if warmup < 0:
        raise UsageError(f"--warmup must be 0 or more, got {warmup}")


def diagnose_script(
    target: Program | str,
    args: Sequence[str] = (),
    *,
    module: bool = False,
    steps: int | None = 20,
    warmup: int = 3,
    quiet: bool = True,
    profile: bool = False,
    hooks: Hooks | None = None,
    rank_dir: str | None = None,
    on_hard_exit: Callable[[Report], None] | None = None,
    whatif: bool = True,
    whatif_budget_s: float | None = None,
    budget_s: float = 60.0,
    diagnose_args: Sequence[str] | None = None,
) -> Report:
    """Run a program (a Program, or a script path / `-m` module name and its args) under the
    probes and return the report.

    `steps`: measured steps before the script is stopped (0: let it finish; None: whole-cycle
    mode, at least 20 steps and then until the next training epoch begins, within `budget_s`
    seconds of wall time from the first measured step). `quiet=False` also
    prints the terminal report. The script's exit code is `report.run.exit_code`.
    `rank_dir`: under torchrun, every rank writes its observation there and rank 0's report
    merges them (per-rank step times and batch sizes: stragglers show up).
    `on_hard_exit(report)`: the program called os._exit, which ends this process once the
    callback returns (the report is printed first unless `quiet`); write report files there.
    `whatif`: time the fixes on copies after the run (diagnose/whatif), within `whatif_budget_s`
    seconds (None: 10% of the diagnosed wall time).
    `diagnose_args`: the words after `python -m torchdoctor` that diagnose the program again
    when it replaces itself with os.exec* (the CLI's own; None: the exec runs undiagnosed).
    """
    _check_counts(steps, warmup)
    program = as_program(target, args, module)
    config = DiagnoseConfig(
        steps=0 if steps is None else steps,
        cycle=steps is None,
        budget_s=budget_s,
        warmup=warmup,
        profile=profile,
        whatif=whatif,
        whatif_budget_s=whatif_budget_s,
    )
    session = Session(config, hooks)
    session.caller_frames = _frames_from(sys._getframe())
    replaced = replaced_note()  # this process is a program's exec of itself, diagnosed again

    def report_for(session: Session, end) -> Report:
        run = build_run(
            session, program.target, list(program.argv), end.status, end.exit_code, end.error
        )
        if replaced:
            run.notes.append(replaced)
        if rank_dir:
            run = _merge_ranks(run, rank_dir)
        return build_report(run, check_all(run))

    # os._exit: Python finalizes none of the program's objects (the session is bound, not
    # closed over, so that deleting the name below lets it go)
    def hard_exit(end, session: Session = session) -> None:
        report = report_for(session, end)
        _render(report, quiet)
        if on_hard_exit is not None:
            on_hard_exit(report)

    end = run_program(session, program, on_hard_exit=hard_exit, diagnose_args=diagnose_args)
    report = report_for(session, end)
    # what-ifs done: the probes' hold on the program's objects goes, and its exit finalizes them
    del session, hard_exit
    if end.remains is not None:
        end.remains.release()
    _render(report, quiet)
    return report


def _frames_from(frame) -> frozenset[int]:
    """The ids of `frame` and the frames that called it."""
    ids = set()
    while frame is not None:
        ids.add(id(frame))
        frame = frame.f_back
    return frozenset(ids)


def _render(report: Report, quiet: bool) -> None:
    if not quiet:
        from torchdoctor.diagnose.report.terminal import render_terminal

        render_terminal(report)


def _merge_ranks(run, rank_dir: str):
    """Every rank writes its observation; rank 0 waits for the others and merges them."""
    from torchdoctor.diagnose.distributed_merge import (
        collect_rank_observations,
        merge_rank_observations,
        write_rank_observation,
    )

    env = run.environment
    write_rank_observation(run, rank_dir, env.rank)
    if env.rank != 0 or env.world_size <= 1:
        return run
    ranks = collect_rank_observations(rank_dir, env.world_size, timeout_s=RANK_WAIT_S)
    return merge_rank_observations(run, ranks)


class Watch:
    """Context manager: probes installed on enter, removed on exit; then `.report` is ready."""

    def __init__(
        self,
        steps: int = 0,
        warmup: int = 3,
        profile: bool = False,
        target: str = "watch",
        whatif: bool = True,
        whatif_budget_s: float | None = None,
    ):
        _check_counts(steps, warmup)
        self.config = DiagnoseConfig(
            steps=steps,
            warmup=warmup,
            profile=profile,
            stop=False,
            whatif=whatif,
            whatif_budget_s=whatif_budget_s,
        )
        self.target = target
        self.session: Session | None = None
        self.report: Report | None = None

    def __enter__(self) -> Watch:
        self.session = Session(self.config)
        self.session.install()
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        session = self.session
        assert session is not None, "__exit__ without __enter__"
        if exc is not None and not isinstance(exc, KeyboardInterrupt):
            session.program_crashed(exc)
        session.uninstall()
        if exc_type is None:
            status, code, error = "completed", 0, None
        elif issubclass(exc_type, KeyboardInterrupt):
            status, code, error = "interrupted", 130, "KeyboardInterrupt"
        else:
            status, code, error = "crashed", 1, f"{exc_type.__name__}: {exc}"
        run = build_run(session, self.target, [], status, code, error)
        self.report = build_report(run, check_all(run))
        return False


def watch(
    steps: int = 0,
    warmup: int = 3,
    profile: bool = False,
    whatif: bool = True,
    whatif_budget_s: float | None = None,
) -> Watch:
    """Diagnose the training code run inside a `with` block (notebooks, custom launchers). The
    what-if probes run at the block's end and leave the program's RNG streams as they were."""
    return Watch(steps, warmup, profile, whatif=whatif, whatif_budget_s=whatif_budget_s)
