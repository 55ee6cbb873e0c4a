"""One place that decides how torchdoctor talks to the terminal.

Progress bars and colour appear only on an interactive terminal; `--quiet` or a pipe (non-TTY,
e.g. CI logs) gives plain, stable text. Everything that prints goes through `make_console`.
"""

from __future__ import annotations

import os
import sys

from rich.console import Console


def is_interactive(stream=None) -> bool:
    stream = stream or sys.stdout
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


# Width of plain (non-TTY) output when COLUMNS does not say: wide enough for a report line
PIPE_WIDTH = 120


class _Console(Console):
    def on_broken_pipe(self) -> None:
        """The reader of our pipe left (`torchdoctor diagnose x.py | head -1`): the rest of the
        output goes to /dev/null, as Python's documentation advises, and the command goes on
        (report files still written, the program's exit code kept). Rich's own handler would
        exit 1 at once."""
        self.quiet = True
        discard_output(self.file)


def discard_output(stream) -> None:
    """Point the stream's file descriptor at /dev/null: its reader left (a closed pipe)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, stream.fileno())
    os.close(devnull)


def flush_stdout() -> None:
    """Flush the program's last output before ours; where the reader left, the rest is dropped."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        discard_output(sys.stdout)


# what our reports' few non-ASCII characters become on a stream that cannot encode them
_PLAIN_SPELLING = str.maketrans(
    {"µ": "u", "→": "->", "×": "x", "≥": ">=", "≤": "<=", "≈": "~", "…": "...", "–": "-", "—": "-"}
)


class _Encodable:
    """The stream, for our text: a character its encoding lacks (the program may have run
    `sys.stdout.reconfigure(encoding="ascii")`, or the terminal is latin-1) is spelled in ASCII
    or replaced, instead of a UnicodeEncodeError that would cost the report."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except UnicodeEncodeError:
            encoding = getattr(self._stream, "encoding", None) or "ascii"
            spelled = text.translate(_PLAIN_SPELLING).encode(encoding, "replace")
            return self._stream.write(spelled.decode(encoding))

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def make_console(quiet: bool = False, stderr: bool = False) -> Console:
    """A rich Console; quiet consoles swallow everything, non-TTY ones print plain text, as wide
    as COLUMNS says (rich reads it when no width is given) or PIPE_WIDTH."""
    stream = sys.stderr if stderr else sys.stdout
    interactive = is_interactive(stream)
    columns = os.environ.get("COLUMNS", "")
    return _Console(
        file=_Encodable(stream),  # type: ignore[arg-type]  # a stream's stand-in
        quiet=quiet,
        force_terminal=interactive,
        no_color=not interactive,
        highlight=False,
        soft_wrap=not interactive,
        width=None if interactive or columns.isdigit() else PIPE_WIDTH,
    )


def progress_enabled(quiet: bool, stream=None) -> bool:
    """Show a live progress bar only when not quiet and attached to a terminal."""
    return not quiet and is_interactive(stream or sys.stderr)
