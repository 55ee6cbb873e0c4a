"""Output files (`--json`, `--html`, `--trace`) and folders (`--rank-dir`) are checked before a
long run, not after it.

The check opens an existing file for appending, as the writer will, or creates a private scratch
file beside a new one: the only test that also catches a read-only filesystem, a file without
write permission and a path that is a folder (`os.access` says yes to root on a read-only mount).
It never creates the target itself: every rank of a torchrun job checks the same path at once,
and one rank's check must not remove (or leave) a file another rank is checking.
"""

from __future__ import annotations

import tempfile
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
    try:
        if target.exists():
            with open(target, "a", encoding="utf-8"):
                pass
        else:
            with tempfile.NamedTemporaryFile(dir=parent, prefix=f".{target.name}.", delete=True):
                pass
    except OSError as exc:
        raise UsageError(f"{flag} {path}: cannot be written ({exc.strerror})") from None


def check_folder_writable(path: str | Path, flag: str = "--rank-dir") -> None:
    """Raise a one-line UsageError when files could not be written in folder `path`, made here
    when missing (every rank makes it at once: an existing one is no error)."""
    folder = Path(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".torchdoctor-check.", delete=True):
            pass
    except OSError as exc:
        raise UsageError(f"{flag} {path}: cannot be written ({exc.strerror})") from None
