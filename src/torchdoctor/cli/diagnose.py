"""`torchdoctor diagnose [OPTIONS] SCRIPT [ARGS...]` / `-m MODULE [ARGS...]`.

Runs the program in this process under the diagnose probes, then prints the report. Options go
before SCRIPT; everything after SCRIPT belongs to the program. The exit code is the program's
(1 when it crashed, 130 on Ctrl-C, 0 when we stopped it after the measured steps).
"""

from __future__ import annotations

import click


def misplaced_options(command: click.Command, args) -> list[str]:
    """Our own options found in the program's argv (they go to the program, not to us)."""
    ours = {name for param in command.params for name in getattr(param, "opts", ())}
    found = (arg.split("=", 1)[0] for arg in args)
    return list(dict.fromkeys(name for name in found if name in ours))


def warn_misplaced_options(command: click.Command, args) -> None:
    misplaced = misplaced_options(command, args)
    if misplaced:
        click.echo(
            f"torchdoctor: warning: {', '.join(misplaced)} after SCRIPT goes to the program, not "
            "to torchdoctor; put torchdoctor's options before SCRIPT",
            err=True,
        )


def _absolute(path: str | None) -> str | None:
    import os

    return os.path.abspath(path) if path else path


@click.command(
    context_settings={"allow_interspersed_args": False, "help_option_names": ["-h", "--help"]},
)
@click.option("-m", "module", is_flag=True, help="SCRIPT is a module name, run like `python -m`.")
@click.option(
    "--steps",
    type=click.IntRange(min=0),
    default=None,
    help="Measured steps before the program is stopped; 0 lets it finish. Default: whole-cycle "
    "mode, at least 20 steps and on until the next training epoch begins (evaluation and "
    "checkpoints between epochs included), within --budget.",
)
@click.option(
    "--budget",
    "budget_s",
    type=click.FloatRange(min=1),
    default=60.0,
    show_default=True,
    help="Whole-cycle mode: wall seconds the measurement may take, from the first measured step "
    "(the program's start-up and warm-up steps are not counted).",
)
@click.option(
    "--warmup",
    type=click.IntRange(min=0),
    default=3,
    show_default=True,
    help="Steps run before measuring (at least 2 are kept out of the measurement).",
)
@click.option(
    "--json", "json_path", type=click.Path(dir_okay=False), help="Write the report as JSON."
)
@click.option("--html", "html_path", type=click.Path(dir_okay=False), help="Write an HTML report.")
@click.option(
    "--trace", "trace_path", type=click.Path(dir_okay=False), help="Write a Chrome/Perfetto trace."
)
@click.option("--profile", is_flag=True, help="Also run a short torch.profiler window.")
@click.option(
    "--rank-dir",
    type=click.Path(file_okay=False),
    help="Under torchrun: every rank writes its observation here; rank 0 reports them all.",
)
@click.option("-q", "--quiet", is_flag=True, help="Print only the verdict line.")
# --try: apply fixes at run time and measure them (torchdoctor.trials, docs/try.md)
@click.option(
    "--try",
    "try_spec",
    metavar="FIX[,FIX...]|all",
    help="Apply these fixes at run time, measure the speedup, check results.",
)
@click.option(
    "--repeats",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="With --try: rounds of runs per configuration (interleaved); up to twice as many "
    "where a fix's rounds disagree.",
)
@click.argument("script")
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def diagnose(
    module,
    steps,
    budget_s,
    warmup,
    json_path,
    html_path,
    trace_path,
    profile,
    rank_dir,
    quiet,
    try_spec,
    repeats,
    script,
    args,
):
    """Run SCRIPT (unmodified) and explain where each training step's time goes."""
    from torchdoctor.outputs import check_folder_writable, check_writable
    from torchdoctor.program import Program

    if try_spec:  # a bad fix name fails before anything runs
        from torchdoctor.trials.fixes import parse_fix_names

        parse_fix_names(try_spec)

    program = Program(script, args, module)  # before importing torch: a typo fails in a blink
    warn_misplaced_options(click.get_current_context().command, args)
    for path, flag in ((json_path, "--json"), (html_path, "--html"), (trace_path, "--trace")):
        if path:  # report files go into writable folders: say so before the program runs
            check_writable(path, flag)
    if rank_dir:
        check_folder_writable(rank_dir)
    # absolute now: the program may chdir, and the files are written (and ranks met) after it ran
    json_path, html_path, trace_path, rank_dir = (
        _absolute(path) for path in (json_path, html_path, trace_path, rank_dir)
    )
    from torchdoctor.diagnose.api import diagnose_script

    outputs = (json_path, html_path, trace_path)
    report = diagnose_script(
        program,
        steps=steps,
        budget_s=budget_s,
        warmup=warmup,
        profile=profile,
        rank_dir=rank_dir,
        on_hard_exit=lambda hard: _publish(hard, quiet, rank_dir, outputs),  # os._exit
        diagnose_args=_diagnose_args(click.get_current_context().params),  # os.exec* of itself
    )
    from torchdoctor.diagnose.program_exit import exit_after_program

    stopped = report.run.status == "stopped"
    if not _publish(report, quiet, rank_dir, outputs):
        exit_after_program(report.run.exit_code, stopped)
    if try_spec and report.run.status in ("completed", "stopped"):
        from torchdoctor.trials.cli_hook import run_try

        trial_steps = 20 if steps is None else steps  # trials measure a fixed count
        env = report.run.environment
        json_path = json_path and rank_file(json_path, env.rank, env.world_size)
        trials = run_try(
            report, program, try_spec, trial_steps, repeats, json_path, quiet, warmup=warmup
        )
        if trials is not None and html_path:  # the page gets the --try table and loss curves
            from torchdoctor.diagnose.report.html import write_html

            report.trials = trials.to_dict()
            write_html(report, html_path)
    exit_after_program(report.run.exit_code, stopped)


def _diagnose_args(params: dict) -> list[str]:
    """`diagnose` and the options this run was given (paths made absolute), as words: what
    diagnoses the program again when it replaces itself with os.exec*."""
    import os

    words = ["diagnose", "--budget", str(params["budget_s"]), "--warmup", str(params["warmup"])]
    if params["steps"] is not None:
        words += ["--steps", str(params["steps"])]
    for flag, name in (("--json", "json_path"), ("--html", "html_path"), ("--trace", "trace_path"),
                       ("--rank-dir", "rank_dir")):  # fmt: skip
        if params[name]:
            words += [flag, os.path.abspath(params[name])]
    if params["try_spec"]:
        words += ["--try", params["try_spec"], "--repeats", str(params["repeats"])]
    flags = (("--profile", "profile"), ("-q", "quiet"), ("-m", "module"))
    return words + [flag for flag, name in flags if params[name]]


def _publish(report, quiet: bool, rank_dir, outputs) -> bool:
    """Print the report and write its files; False on a non-zero rank (rank 0 reports)."""
    from torchdoctor.console import flush_stdout
    from torchdoctor.diagnose.report.html import write_html
    from torchdoctor.diagnose.report.json import write_json
    from torchdoctor.diagnose.report.terminal import render_terminal, render_verdict
    from torchdoctor.diagnose.report.trace import write_trace

    flush_stdout()
    env = report.run.environment
    if rank_dir and env.world_size > 1 and env.rank != 0:  # rank 0 reports for every rank
        print(
            f"torchdoctor diagnose: rank {env.rank}: observation written to {rank_dir}; "
            "rank 0 prints the report"
        )
        return False
    if quiet:
        render_verdict(report)
    else:
        render_terminal(report)  # first: an unwritable file below must not cost the report
    for path, write in zip(outputs, (write_json, write_html, write_trace)):
        if path:
            path = rank_file(path, env.rank, env.world_size)
            try:
                write(report, path)
            except OSError as exc:
                from torchdoctor.errors import TorchdoctorError

                raise TorchdoctorError(f"cannot write {path}: {exc.strerror}") from None
    return True


def rank_file(path: str, rank: int, world_size: int) -> str:
    """Where this rank's report file goes. Under torchrun without --rank-dir every rank writes
    its own report: rank 0 to the name given, rank N to NAME.rankN.EXT beside it (`report.json`
    -> `report.rank1.json`), so that no rank overwrites another's."""
    if world_size <= 1 or rank == 0:
        return path
    import os

    stem, extension = os.path.splitext(path)
    return f"{stem}.rank{rank}{extension}"
