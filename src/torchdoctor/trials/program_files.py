"""The program's files, as each trial found them: `--try` runs the program again and again in its
own folder, and every run would append to its log, overwrite its checkpoints and leave files of
its own where the program's outputs go (one `diagnose --try` appended eleven runs' lines to a
log the program writes once). A later trial would also find them (a script that resumes from its
last checkpoint trains on from another trial's weights).

In the trial's process, before the program first writes a file (Python's audit events for
`open` in a writing mode, `os.open`, `os.rename`/`os.replace` onto it, `os.remove`, `os.mkdir`;
`torch.save` to a path, which writes from C++ without an event), the file is copied aside; when
the trial ends, the copies are put back and what the trial created is removed. The processes the
program forks (DataLoader workers, `multiprocessing` with fork, `os.fork`) inherit the tracking:
which process first changes a file is settled in the folder the copies go to (one claim file per
path, created exclusively), so a file a child rewrote is put back too. Processes started afresh
(spawn, forkserver, `subprocess`) are not tracked from inside: the program's folder is listed
when the trial starts (up to LISTING_LIMIT entries), and at its end a file that appeared is
removed and one that changed without a copy is named in `not_restored`. Left alone: the
temporary folder outside the program's own (library caches), /dev and /proc, `__pycache__`,
and a file past the copy limit (named in `not_restored`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
import time
from typing import Any

import torch

COPY_LIMIT_BYTES = 2 << 30  # files copied aside in all, per trial: a larger one is not restored
_EVENTS = frozenset(("open", "os.rename", "os.remove", "os.mkdir"))
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def _writes(mode: Any, flags: Any) -> bool:
    if isinstance(mode, str):
        return any(letter in mode for letter in "wax+")
    return isinstance(flags, int) and bool(flags & _WRITE_FLAGS)


def _folders(*folders: str) -> tuple[str, ...]:
    return tuple(os.path.realpath(folder) + os.sep for folder in folders)


LISTING_LIMIT = 20_000  # entries of the program's folder listed per trial; more: not listed
CLAIM_WAIT_S = 5.0  # how long a process waits for another's copy of a file it is about to change


def _claim_name(path: str) -> str:
    return hashlib.sha1(os.fsencode(path)).hexdigest()


class ProgramFiles:
    """Installed once in a trial's process (audit hooks cannot be removed: the process is the
    trial's alone); `restore()` at the trial's end."""

    def __init__(self, program_folder: str) -> None:
        """`program_folder`: where the program runs. Our result file is written after
        `restore()`, which ends the tracking."""
        self._owner = os.getpid()
        self._aside = tempfile.mkdtemp(prefix="torchdoctor-trial-files-")
        self._left_alone = _folders(self._aside, "/dev", "/proc")
        # library caches (torchinductor's) live in the temporary folder; a program run there
        # (a test's tmp_path) still has its own files tracked
        self._temporary = _folders(tempfile.gettempdir())
        self._program_folder = _folders(program_folder)
        self._seen: set[str] = set()  # paths this process knows are claimed (forks inherit it)
        self._copied_bytes = 0
        self.not_restored: list[str] = []
        self._busy = False
        self._listing = _listing(self._program_folder[0])
        sys.addaudithook(self._on_event)
        real_save = torch.save

        def save(obj, f, *args, **kwargs):
            if isinstance(f, (str, os.PathLike)):
                self._before_change(f)
            return real_save(obj, f, *args, **kwargs)

        torch.save = save

    def _on_event(self, event: str, args: tuple) -> None:
        # first: every audit event of the process comes here (builtins.id, sys._getframe: ~18
        # a step of a small diagnosed loop)
        if event not in _EVENTS or self._busy:
            return
        if event == "open" and _writes(args[1], args[2]):
            self._before_change(args[0])
        elif event == "os.rename":
            self._before_change(args[1])
            self._before_change(args[0])
        elif event == "os.remove":
            self._before_change(args[0])
        elif event == "os.mkdir":
            path = self._tracked(args[0])
            if path is not None and not os.path.exists(path):
                self._claim(path, "folder")

    def _tracked(self, name: Any) -> str | None:
        if not isinstance(name, (str, bytes, os.PathLike)):
            return None  # a file descriptor
        path = os.path.realpath(os.fsdecode(name))
        if path.startswith(self._left_alone) or f"{os.sep}__pycache__{os.sep}" in path:
            return None
        if path.startswith(self._temporary) and not path.startswith(self._program_folder):
            return None
        return path

    def _before_change(self, name: Any) -> None:
        path = self._tracked(name)
        if path is not None and path not in self._seen:
            self._claim(path, "file")

    def _claim(self, path: str, kind: str) -> None:
        """The first process of the trial to change `path` copies it aside; the others wait
        until that copy is done."""
        self._seen.add(path)
        claim = os.path.join(self._aside, _claim_name(path))
        self._busy = True  # copying opens files too
        try:
            try:
                descriptor = os.open(claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                _wait_for(claim)
                return
            with os.fdopen(descriptor, "w") as record:
                record.write(f"{self._saved(path, claim, kind)}\n{path}")
        except OSError:
            pass
        finally:
            self._busy = False

    def _saved(self, path: str, claim: str, kind: str) -> str:
        """How `path` is kept: "copy" (aside, beside its claim), "new" (it did not exist: the
        trial made it), "folder" (a new folder), "failed" (too large, unreadable)."""
        if kind == "folder":
            return "folder"
        if not os.path.isfile(path):
            return "new"
        try:
            size = os.path.getsize(path)
            if self._copied_bytes + size > COPY_LIMIT_BYTES:
                return "failed"
            self._copied_bytes += size
            shutil.copy2(path, claim + ".copy")
        except OSError:
            return "failed"
        return "copy"

    def _claims(self) -> list[tuple[str, str, str]]:
        """(how, path, claim file) of every path the trial's processes changed."""
        claims = []
        for name in os.listdir(self._aside):
            if name.endswith(".copy"):
                continue
            claim = os.path.join(self._aside, name)
            try:
                with open(claim) as record:
                    how, _, path = record.read().partition("\n")
            except OSError:
                continue
            if path:
                claims.append((how, path, claim))
        return claims

    def restore(self) -> None:
        """Put back the files as the trial found them; remove what it created. Tracking ends.
        Only the trial's own process restores (a forked child that ends leaves them alone)."""
        if os.getpid() != self._owner:
            return
        self._busy = True
        claims = self._claims()
        for how, path, claim in claims:
            try:
                if how == "copy":
                    shutil.copy2(claim + ".copy", path)
                elif how == "new" and (os.path.isfile(path) or os.path.islink(path)):
                    os.remove(path)
                elif how == "failed":
                    self.not_restored.append(path)
            except OSError:
                self.not_restored.append(path)
        self._untracked_changes({path for _, path, _ in claims})
        folders = [path for how, path, _ in claims if how == "folder"]
        for folder in sorted(folders, key=len, reverse=True):
            try:
                os.rmdir(folder)
            except OSError:  # not empty: something in it was not the trial's
                pass
        shutil.rmtree(self._aside, ignore_errors=True)

    def _untracked_changes(self, claimed: set[str]) -> None:
        """What processes the tracking did not reach (spawned, `subprocess`) changed in the
        program's folder: a file that appeared is removed (with the folders it made), a file
        that changed is named in `not_restored` (no copy of it was made)."""
        if self._listing is None:
            return
        after = _listing(self._program_folder[0])
        if after is None:
            return
        for path, state in after.items():
            if path in claimed or self._listing.get(path) == state:
                continue
            if path not in self._listing:
                try:
                    if state is None:
                        os.rmdir(path)  # a folder: empty once its new files are gone
                    else:
                        os.remove(path)
                except OSError:
                    if state is not None:
                        self.not_restored.append(path)
            elif state is not None:
                self.not_restored.append(path)


def _listing(folder: str) -> dict[str, tuple[int, int] | None] | None:
    """Every file (path -> size and modification time) and folder (path -> None) under
    `folder`, deepest last; None when there are more than LISTING_LIMIT."""
    found: dict[str, tuple[int, int] | None] = {}
    for root, folders, files in os.walk(folder):
        folders[:] = [name for name in folders if name != "__pycache__"]
        for name in files:
            path = os.path.join(root, name)
            try:
                status = os.lstat(path)
            except OSError:
                continue
            found[path] = (status.st_size, status.st_mtime_ns)
        for name in folders:
            found[os.path.join(root, name)] = None
        if len(found) > LISTING_LIMIT:
            return None
    # removal order: files first, then folders deepest first
    return dict(sorted(found.items(), key=lambda item: (item[1] is None, -len(item[0]))))


def _wait_for(claim: str) -> None:
    """Until the process that claimed a path has recorded how it kept it."""
    deadline = time.monotonic() + CLAIM_WAIT_S
    while time.monotonic() < deadline:
        try:
            if os.path.getsize(claim) > 0:
                return
        except OSError:
            return
        time.sleep(0.001)
