"""What `torchdoctor diagnose --try` runs after the diagnosis: the trials, their table, and the
`trials` section added to the diagnosis JSON (schema in docs/try.md)."""

from __future__ import annotations

import json
from pathlib import Path

from torchdoctor.errors import TorchdoctorError
from torchdoctor.program import Program


def run_try(report, program: Program, try_spec, steps, repeats, json_path, quiet) -> None:
    """`steps` is diagnose's --steps (0 there means "run to the end": trials then measure 20)."""
    from torchdoctor.console import make_console
    from torchdoctor.trials.api import NothingToTry, run_trials
    from torchdoctor.trials.render import render_terminal

    console = make_console(quiet)
    try:
        trials = run_trials(
            program,
            (),
            try_spec,
            steps=steps or 20,
            repeats=repeats,
            diagnosis=report,
        )
    except NothingToTry as exc:
        console.print(f"--try: {exc}", markup=False)
        return
    render_terminal(trials, console)
    if json_path:
        add_trials_section(json_path, trials.to_dict())


def add_trials_section(json_path: str, trials: dict) -> None:
    path = Path(json_path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        data["trials"] = trials
        path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    except (OSError, ValueError) as exc:
        raise TorchdoctorError(f"cannot add the trials section to {json_path}: {exc}") from None
