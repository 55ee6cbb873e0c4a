"""Output files (`--json`, `--html`, `--trace`) are checked before a long run, not after it.

The check opens the file for appending, as the writer will: that is the only test that also
catches a read-only filesystem, a file without write permission and a path that is a folder
(`os.access` says yes to root on a read-only mount). A file the check created is removed again.
"""

from __future__ import annotations

import os
from pathlib import Path

from torchdoctor.errors import UsageError


def check_writable(path: str | Path, flag: str = "--json") -> None:
    """Raise a one-line UsageError when `path` could not be written."""
    target = Path(path)
    parent = target.resolve().parent
    if not parent.is_dir():
        raise UsageError(f"{flag} {path}: directory {parent} does not exist")
    if target.is_dir():
        raise UsageError(f"{flag} {path}: is a directory")
    existed = target.exists()
    try:
        with open(target, "a", encoding="utf-8"):
            pass
    except OSError as exc:
        raise UsageError(f"{flag} {path}: cannot be written ({exc.strerror})") from None
    if not existed:
        os.remove(target)
