"""Checks on the files a command will write, made before the long run rather than after it."""

from __future__ import annotations

import os
from pathlib import Path

from torchdoctor.errors import UsageError


def check_writable(path: str | Path, flag: str = "--json") -> None:
    """UsageError (exit 2) when `path` could not be written: its directory is missing or
    read-only. `flag` names the option that asked for the file."""
    parent = Path(path).resolve().parent
    if not parent.is_dir():
        raise UsageError(f"{flag} {path}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise UsageError(f"{flag} {path}: directory {parent} is not writable")
