"""A warning that torch raises inside a call we wrap names the program's line, not ours.

torch's C++ warnings (`TORCH_WARN`: `float(loss)` on a tensor that requires grad, a deprecated
argument) are raised at the Python frame that called into C, and Python code of torch warns a
fixed number of frames up (`stacklevel=2`). With a wrapper of ours in between, that frame is
the wrapper's: the program's warning would read `torchdoctor/diagnose/probes/syncs.py:90:
UserWarning: ...`, blaming us for a line of the program. While diagnosis runs, a warning shown
from a wrapper's `original(...)` call (the call of the wrapped callable, as
`patching.raised_by_the_original` tells an exception apart) is shown at the first frame out of
torchdoctor instead: the program's, as in its plain run. Warnings our own code raises keep
their place.

Python's warning registry is the wrapper module's, so a message the program triggers on several
of its lines is shown once, at the first (the plain run shows it once per line).
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from types import CodeType, FrameType
from typing import Any, TextIO

from torchdoctor.intercept.patching import calling_the_original

_PACKAGE_DIR = str(Path(__file__).resolve().parent.parent)  # .../torchdoctor


def _ours(frame: FrameType) -> bool:
    return frame.f_code.co_filename.startswith(_PACKAGE_DIR)


def program_frame_of(filename: str, lineno: int) -> FrameType | None:
    """The program's frame for a warning shown at `filename:lineno`, when that is a wrapper of
    ours calling the callable it wraps (None otherwise: keep the warning where it is)."""
    if not filename.startswith(_PACKAGE_DIR):
        return None
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and not (
        frame.f_code.co_filename == filename and frame.f_lineno == lineno
    ):
        frame = frame.f_back  # warnings' own frames, then the wrapper's
    if frame is None or not calling_the_original(frame):
        return None
    while frame is not None and _ours(frame):
        frame = frame.f_back
    return frame


_WARNINGS_FILE = warnings.__file__

# wrappers of ours that sit between warn() and showwarning (the io probe times
# `warnings._showwarnmsg`): part of the warning machinery, not the code that warned
_SEEN_THROUGH: set[CodeType] = set()


def see_through(code: CodeType) -> None:
    """Count frames running `code` as the warnings module's own when finding who warned."""
    _SEEN_THROUGH.add(code)


def _warning_machinery(frame: FrameType) -> bool:
    code = frame.f_code
    return code.co_filename in (_WARNINGS_FILE, __file__) or code in _SEEN_THROUGH


def plain_run_frame_of(filename: str, lineno: int) -> FrameType | None:
    """The frame a warning raised with `stacklevel=N` names in the plain run, when wrappers of
    ours between the warning's call and `filename:lineno` moved it (N frames up, ours counted,
    lands short: torch's full-backward-hook warning read `torch/_tensor.py:623` instead of the
    program's `loss.backward()` line). None: nothing of ours in between, or the warning is ours."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and _warning_machinery(frame):
        frame = frame.f_back  # warnings' own frames and ours here: then the caller of warn()
    if frame is None or _ours(frame):
        return None
    origin, levels, crossed = frame, 0, 0
    while frame is not None and not (
        frame.f_code.co_filename == filename and frame.f_lineno == lineno
    ):
        crossed += _ours(frame)
        levels += 1
        frame = frame.f_back
    if frame is None or not crossed:
        return None
    frame = origin
    while levels and frame is not None:  # the same count of frames up, ours not counted
        frame = frame.f_back
        if frame is not None and not _ours(frame):
            levels -= 1
    return frame


class WarningSource:
    """Installs itself as `warnings.showwarning` for the session; restore() puts back the one
    it found (unless the program replaced it since: then theirs stays)."""

    def __init__(self) -> None:
        self._previous: Any = None

    def install(self) -> None:
        self._previous = warnings.showwarning
        warnings.showwarning = self._show

    def restore(self) -> None:
        if self._previous is not None and warnings.showwarning == self._show:
            warnings.showwarning = self._previous
        self._previous = None

    def _show(
        self,
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        frame = program_frame_of(filename, lineno) or plain_run_frame_of(filename, lineno)
        if frame is not None:
            filename, lineno, line = frame.f_code.co_filename, frame.f_lineno, None
        self._previous(message, category, filename, lineno, file, line)
