"""Errors that reach the user as one clear line and an exit code, never a traceback from our code.

Raise `UsageError` for bad input the user can fix by changing the command (exit 2, like a bad
flag), and `TorchdoctorError` (or a subclass) for everything else we detect (exit 1).
The CLI (torchdoctor.cli) turns both into `torchdoctor: error: <message>`.
"""

from __future__ import annotations


class TorchdoctorError(Exception):
    """A failure we understand and can explain in one line."""

    exit_code = 1


class UsageError(TorchdoctorError):
    """The command line or its arguments are wrong (missing file, unknown recipe, bad value)."""

    exit_code = 2


class CheckpointError(TorchdoctorError):
    """A checkpoint is missing, truncated, corrupt, or cannot be written."""

    exit_code = 1
