"""What `torchdoctor diagnose --try` runs after the diagnosis: the trials, their table, and the
`trials` section added to the diagnosis JSON (schema in docs/try.md)."""

from __future__ import annotations

import json
from pathlib import Path

from torchdoctor.errors import TorchdoctorError
from torchdoctor.program import Program


def run_try(
    report, program: Program, try_spec, steps, repeats, json_path, quiet, *, warmup: int = 2
):
    """`steps` and `warmup` are diagnose's --steps and --warmup (--steps 0 there means "run to
    the end": trials then measure 20); a trial counts steps as the diagnosis does, and each run
    measures at least MIN_WINDOW_S (where the script runs that long). `repeats` rounds, and up to
    twice as many where a fix's rounds disagree. Returns the TrialReport, or None when nothing
    could be tried."""
    from torchdoctor.console import make_console
    from torchdoctor.trials.api import NothingToTry, run_trials
    from torchdoctor.trials.cycle import MIN_WINDOW_S
    from torchdoctor.trials.progress import trial_progress
    from torchdoctor.trials.render import render_terminal

    console = make_console(quiet)
    try:
        with trial_progress(quiet) as progress:
            trials = run_trials(
                program,
                (),
                try_spec,
                steps=steps or 20,
                warmup=warmup,
                repeats=repeats,
                diagnosis=report,
                progress=progress,
                min_window_s=MIN_WINDOW_S,
                max_repeats=2 * repeats,
            )
    except NothingToTry as exc:  # said even with --quiet: the user asked for trials
        make_console().print(f"--try: {exc}", markup=False)
        return None
    render_terminal(trials, console)
    if json_path:
        add_trials_section(json_path, trials.to_dict())
    return trials


def add_trials_section(json_path: str, trials: dict) -> None:
    path = Path(json_path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        data["trials"] = trials
        path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    except (OSError, ValueError) as exc:
        raise TorchdoctorError(f"cannot add the trials section to {json_path}: {exc}") from None
