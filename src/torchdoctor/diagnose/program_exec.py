"""A program that replaces itself (os.execv / os.execve; os.execl*, os.execvp* go through them).

The exec replaces this process, torchdoctor with it: no report can follow in it. Scripts re-run
themselves that way (to set an environment variable, or to start a second phase with a flag).
When the new command is the same Python running the same program and the run was started by
`torchdoctor diagnose`, the new process is run under diagnose with the same options instead:
the program's output and exit code stay as plainly, and the one report at the end covers the
program that ran last, with a note on what was measured before the exec. Any other command
runs as asked, after a note on stderr that no report can follow.

    exec_again = ExecAgain(["diagnose", "--steps", "0"], steps_run=lambda: tracker.index)
    watch_exec(patcher, program, exec_again)
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from torchdoctor.intercept.patching import Patcher
from torchdoctor.program import Program

# set in the new process's environment: the steps the replaced process ran (read and removed at
# the new diagnose's start, so that the program's own children never see it)
REPLACED_AFTER_STEPS = "TORCHDOCTOR_REPLACED_AFTER_STEPS"


@dataclass(frozen=True)
class ExecAgain:
    """How to diagnose the program again when it replaces itself: `diagnose_args` are the words
    after `python -m torchdoctor` and before the program (`diagnose`, its options, `-m`)."""

    diagnose_args: Sequence[str]
    steps_run: Callable[[], int]


def replaced_note() -> str | None:
    """In a process started by `ExecAgain`: the report's note (the variable is removed)."""
    steps = os.environ.pop(REPLACED_AFTER_STEPS, None)
    if steps is None:
        return None
    return (
        f"the program replaced itself (os.exec*) after {steps} training step(s); this report "
        "covers the program it started again, from its start"
    )


def watch_exec(patcher: Patcher, program: Program, exec_again: ExecAgain | None) -> None:
    owner = os.getpid()

    def make_exec(real_exec):
        def exec_watched(path, argv, *env):
            tail = _same_program(path, argv, program) if exec_again is not None else None
            if os.getpid() != owner:
                return real_exec(path, argv, *env)
            if exec_again is None or tail is None:
                print(
                    "torchdoctor: the program replaced itself with another (os.exec*): no report "
                    "(diagnose the command it runs)",
                    file=sys.stderr,
                )
                flush_quietly(sys.stderr)
                return real_exec(path, argv, *env)
            steps = {REPLACED_AFTER_STEPS: str(exec_again.steps_run())}
            command = [sys.executable, "-m", "torchdoctor", *exec_again.diagnose_args, *tail]
            if env:  # os.execve: the environment it gives the new process, with our count
                return real_exec(sys.executable, command, {**env[0], **steps})
            os.environ.update(steps)
            return real_exec(sys.executable, command)

        return exec_watched

    for name in ("execv", "execve"):
        patcher.replace(os, name, make_exec)


def _same_program(path, argv, program: Program) -> list[str] | None:
    """The program's words (target and arguments) when `path argv` runs this Python on the
    program again with no interpreter option (`python script.py ...`, `python -m pkg ...`)."""
    try:
        words = [os.fsdecode(word) for word in argv]
        if not _same_file(os.fsdecode(path), sys.executable) or len(words) < 2:
            return None
        if program.module:
            same = len(words) > 2 and words[1] == "-m" and words[2] == program.target
            return words[2:] if same else None
        return words[1:] if _same_file(words[1], program.path) else None
    except (TypeError, ValueError, OSError):  # the real exec says what is wrong with them
        return None


def _same_file(one: str, other: str) -> bool:
    return os.path.realpath(one) == os.path.realpath(other)


def flush_quietly(stream) -> None:
    try:
        stream.flush()
    except (OSError, ValueError, AttributeError):  # closed or odd stream: it was the program's
        pass
