"""Find the user's `file:line` behind a call into torch, cheaply.

Checking every frame's file name on every `.item()` would cost more than the sync it reports, so
"is this torch's code?" is decided once per code object and the `file:line` string is built once
per (code object, line); afterwards a call costs a few dict look-ups.
"""

from __future__ import annotations

import os
import re
import sys

import torch

from torchdoctor.diagnose.source_lines import short_path

_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# Our machinery (probes, runner, CLI, --try hooks and the patches calling them), not all of
# torchdoctor: a training loop that lives in the package (the demo's naive loop, the Trainer) is the
# user's code for a diagnosis.
_OURS = tuple(_PACKAGE + part + os.sep for part in ("diagnose", "cli", "trials", "intercept"))
_SKIP = (
    _TORCH_DIR,
    *_OURS,
    _PACKAGE + "__main__.py",
    "<frozen ",
    os.path.dirname(os.__file__) + os.sep + "runpy.py",
)

# A program's own TorchFunctionMode / TorchDispatchMode relays torch's calls through these
# methods: the relay is not where a call comes from (AdamW reading its step count inside the
# program's mode is still torch's read), so it is looked through like library code.
_RELAYS = ("__torch_function__", "__torch_dispatch__")
_library_code: dict = {}  # code object -> is it torch/torchdoctor/stdlib-runpy code (or a relay)?
# (user code object, instruction offset) -> "file:line": the offset is a field of the frame, while
# `f_lineno` scans the code's line table from its start (a long training function's, per call)
_location: dict[tuple, str] = {}
# An installed package (torchmetrics, Lightning) that makes the call is not where the user can
# change it: blame the program's line that called into the package. The walk looks past such
# frames only to find that line; the fast paths that dismiss torch's own reads do not.
_INSTALLED = (os.sep + "site-packages" + os.sep, os.sep + "dist-packages" + os.sep)
_installed_code: dict = {}  # code object -> is it an installed package's code (not torchdoctor)?
# (code object, instruction offset) -> "file:line" of a frame asked about that was the program's
# own line itself: the usual call (a forward or a backward() called from the training loop) costs
# one look-up instead of the walk's (round 9: the probes' per-step work is counted in bytecode
# instructions, bench/diagnose_calls.py --opcodes). Only such frames: where the walk went past a
# frame, the answer depends on the frames above it.
_own_line: dict[tuple, str] = {}


def _is_library(filename: str) -> bool:
    return filename.startswith(_SKIP) or _is_generated(filename)


def _is_generated(filename: str) -> bool:
    """Python that torch.compile's inductor wrote (its cache directory: `torchinductor_USER` in
    the temporary directory, or TORCHINDUCTOR_CACHE_DIR, read when asked: a program may set it).
    It runs the program's compiled model; it is not a line the program wrote."""
    if os.sep + "torchinductor_" in filename:
        return True
    named = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if not named:
        return False
    return filename.startswith(os.path.join(os.path.abspath(named), ""))


def is_library_code(code) -> bool:
    """torch's, torchdoctor's or the standard runner's code, or a torch mode's relay method."""
    return _is_library(code.co_filename) or code.co_name in _RELAYS


def _is_installed(code) -> bool:
    filename = code.co_filename
    return any(part in filename for part in _INSTALLED) and not filename.startswith(_PACKAGE)


def installed_package(filename: str) -> str | None:
    """The top-level name of the installed package (site-packages) a file belongs to, or None
    for the program's own files and torchdoctor's."""
    for part in _INSTALLED:
        at = filename.rfind(part)
        if at >= 0 and not filename.startswith(_PACKAGE):
            name = filename[at + len(part) :].split(os.sep, 1)[0]
            return name.removesuffix(".py") or None
    return None


def user_location(depth: int = 2) -> str:
    """`file:line` of the first frame outside torch and torchdoctor, `depth` frames up; past an
    installed package's frames to the program's line that called it, when there is one."""
    try:
        frame = sys._getframe(depth)
    except ValueError:
        return "<unknown>"
    first_key = (frame.f_code, frame.f_lasti)
    location = _own_line.get(first_key)
    if location is not None:
        return location
    first_frame = frame
    library, installed = _library_code, _installed_code
    first_installed = None  # the package's frame nearest the call, if no program line is found
    while frame is not None:
        code = frame.f_code
        is_library = library.get(code)
        if is_library is None:
            is_library = library[code] = is_library_code(code)
        if not is_library:
            is_installed = installed.get(code)
            if is_installed is None:
                is_installed = installed[code] = _is_installed(code)
            if not is_installed:
                break
            if first_installed is None:
                first_installed = frame
        frame = frame.f_back
    if frame is None:
        return "<unknown>" if first_installed is None else _line_of(first_installed)
    location = _line_of(frame)
    if frame is first_frame:
        _own_line[first_key] = location
    return location


def is_own_line(code, offset: int) -> bool:
    """`user_location` found the program's line in the frame running `code` at `offset` itself:
    its answer for that frame is the same wherever the frame was called from."""
    return (code, offset) in _own_line


def _line_of(frame) -> str:
    key = (frame.f_code, frame.f_lasti)
    location = _location.get(key)
    if location is None:
        location = _location[key] = f"{short_path(frame.f_code.co_filename)}:{frame.f_lineno}"
    return location


def is_library_file(filename: str) -> bool:
    return _is_library(filename)


# What runs the program and watches it: our machinery. runpy's frames stay: the runner calls
# runpy only where Python does (`-m`, a directory or zip: `_run_module_as_main`, whose
# `<frozen runpy>` frames the plain run's traceback shows too), and a program's own
# `runpy.run_path` is the program's. torch's frames and the standard library's stay as well.
_RUNNERS = (*_OURS, _PACKAGE + "__main__.py")


def is_runner_file(filename: str) -> bool:
    """torchdoctor's own machinery: frames to take out of the program's traceback."""
    return filename.startswith(_RUNNERS)


# A frame as the traceback module writes it ("  File "x.py", line 3, in f"), followed by its
# source line and carets, indented further
_FRAME_LINE = re.compile(r'^(\s*)File "([^"]+)", line \d+, in ')


def without_our_frame_lines(text: str) -> str:
    """`text` (an exception's message) without the frames of ours written into it: dynamo's
    "from user code:" stack lists each function it traced through, our wrappers of the
    program's calls (`opt.zero_grad()`) among them."""
    if 'File "' not in text:
        return text
    kept: list[str] = []
    dropping_under: int | None = None  # the indentation of a frame line of ours being dropped
    for line in text.splitlines(keepends=True):
        indent = len(line) - len(line.lstrip())
        if dropping_under is not None and line.strip() and indent > dropping_under:
            continue  # its source line and carets
        dropping_under = None
        frame = _FRAME_LINE.match(line)
        if frame is not None and is_runner_file(frame.group(2)):
            dropping_under = len(frame.group(1))
            continue
        kept.append(line)
    return "".join(kept)
