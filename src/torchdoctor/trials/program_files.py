"""The program's files, as each trial found them: `--try` runs the program again and again in its
own folder, and every run would append to its log, overwrite its checkpoints and leave files of
its own where the program's outputs go (one `diagnose --try` appended eleven runs' lines to a
log the program writes once). A later trial would also find them (a script that resumes from its
last checkpoint trains on from another trial's weights).

In the trial's process, before the program first writes a file (Python's audit events for
`open` in a writing mode, `os.open`, `os.rename`/`os.replace` onto it, `os.remove`, `os.mkdir`;
`torch.save` to a path, which writes from C++ without an event), the file is copied aside; when
the trial ends, the copies are put back and what the trial created is removed. Left alone: the
temporary folder outside the program's own (library caches), /dev and /proc,
`__pycache__`, writes from the program's child processes, and a file past the copy limit (named
in the result).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
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
        self._copies: dict[str, str | None] = {}  # path -> its copy aside (None: it was new)
        self._new_folders: list[str] = []
        self._copied_bytes = 0
        self.not_restored: list[str] = []
        self._busy = False
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
        if event not in _EVENTS or self._busy or os.getpid() != self._owner:
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
                self._new_folders.append(path)

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
        if path is None or path in self._copies or path in self.not_restored:
            return
        self._busy = True  # copying opens files too
        try:
            self._copies[path] = self._copy_aside(path) if os.path.isfile(path) else None
        except OSError:
            self.not_restored.append(path)
        finally:
            self._busy = False

    def _copy_aside(self, path: str) -> str:
        size = os.path.getsize(path)
        if self._copied_bytes + size > COPY_LIMIT_BYTES:
            raise OSError("past the copy limit")
        self._copied_bytes += size
        copy = os.path.join(self._aside, str(len(self._copies)))
        shutil.copy2(path, copy)
        return copy

    def restore(self) -> None:
        """Put back the files as the trial found them; remove what it created. Tracking ends."""
        self._busy = True
        for path, copy in self._copies.items():
            try:
                if copy is not None:
                    shutil.copy2(copy, path)
                elif os.path.isfile(path) or os.path.islink(path):
                    os.remove(path)
            except OSError:
                self.not_restored.append(path)
        for folder in reversed(self._new_folders):
            try:
                os.rmdir(folder)
            except OSError:  # not empty: something in it was not the trial's
                pass
        shutil.rmtree(self._aside, ignore_errors=True)
