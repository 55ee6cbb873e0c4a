"""Run an unmodified Python program in this process, the way `python script.py` / `python -m`
would, while a diagnosis Session watches it.

`__main__` semantics come from runpy; sys.argv is the program's argv and sys.path[0] its directory
(the current directory for -m), the working directory is left alone while it runs, and everything
(the working directory, sys.stdout and sys.stderr included) is put back afterwards. The
program's own output goes straight to our stdout/stderr. Its end is classified: finished,
stopped by us after the measured steps, crashed (its traceback is printed with only its own
frames, never ours), interrupted (Ctrl-C, or SIGTERM: exit code 143 with the report), or exited
via sys.exit (the code is kept)."""

from __future__ import annotations

import os
import runpy
import signal
import sys
import threading
import traceback
from dataclasses import dataclass

from torchdoctor.diagnose.callsite import is_library_file
from torchdoctor.diagnose.session import Session, StopDiagnosis


@dataclass
class ProgramEnd:
    status: str  # "completed", "stopped", "crashed", "interrupted"
    exit_code: int
    error: str | None = None


def _exit_code(code) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # sys.exit("message"): Python prints it and exits 1
    return 1


def _user_frames_only(exc: BaseException) -> traceback.TracebackException:
    """The traceback as Python would print it, minus torchdoctor's and runpy's frames."""
    report = traceback.TracebackException.from_exception(exc)
    pending = [report]
    while pending:
        current = pending.pop()
        kept = [frame for frame in current.stack if not is_library_file(frame.filename)]
        current.stack = traceback.StackSummary.from_list(kept)
        pending.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return report


def _error_line(exc: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()[-1]


class _Terminated(BaseException):
    """SIGTERM (a scheduler's or `timeout`'s stop) arrived: unwind like Ctrl-C, keep the report."""


def _raise_terminated(signum, frame):
    raise _Terminated


def _catch_sigterm():
    """Our SIGTERM handler while the program runs; returns the one to put back (None: none set).
    Only over the default handler, and only in the main thread (where signals are delivered)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return None
    return signal.signal(signal.SIGTERM, _raise_terminated)


def _torch_modes():
    """Process-wide torch modes a stopped program may leave switched (its own cleanup after our
    stop never runs): grad and anomaly modes, the default dtype. Put back for the caller."""
    import torch

    grad = torch.is_grad_enabled()
    default_dtype = torch.get_default_dtype()
    anomaly = torch.is_anomaly_enabled()
    check_nan = getattr(torch, "is_anomaly_check_nan_enabled", lambda: True)()

    def restore() -> None:
        torch.set_grad_enabled(grad)
        torch.set_default_dtype(default_dtype)
        if torch.is_anomaly_enabled() != anomaly:
            try:
                torch.autograd.set_detect_anomaly(anomaly, check_nan=check_nan)
            except TypeError:  # older torch: no check_nan
                torch.autograd.set_detect_anomaly(anomaly)

    return restore


def _flush(stream) -> None:
    try:
        stream.flush()
    except (OSError, ValueError, AttributeError):  # closed or odd stream: it was the program's
        pass


def _return_to(directory: str) -> None:
    try:
        os.chdir(directory)
    except OSError:  # the program removed it: stay where it left us
        pass


def run_program(session: Session, target: str, args: list[str], module: bool = False) -> ProgramEnd:
    """Run the program with the session's probes installed; never raises for the program's sake."""
    saved_argv, saved_path, saved_cwd = sys.argv[:], sys.path[:], os.getcwd()
    saved_streams = sys.stdout, sys.stderr  # the program may point them at its own log file
    sys.argv = [target, *args]  # for -m, runpy replaces argv[0] with the module's file
    if module:
        first = os.getcwd()
    elif os.path.isdir(target):  # a directory (or zip) with __main__.py: itself, like python
        first = os.path.abspath(target)
    else:
        first = os.path.dirname(os.path.abspath(target))
    if sys.path:
        sys.path[0] = first  # as `python script.py` / `python -m` set it
    else:
        sys.path.append(first)
    previous_sigterm = _catch_sigterm()
    restore_torch_modes = _torch_modes()
    session.install()
    try:
        if module:
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(target, run_name="__main__")
        end = ProgramEnd("completed", 0)
    except StopDiagnosis:
        end = ProgramEnd("stopped", 0)
    except SystemExit as exc:
        end = ProgramEnd("completed", _exit_code(exc.code))
    except KeyboardInterrupt:
        end = ProgramEnd("interrupted", 130, "KeyboardInterrupt")
    except _Terminated:
        end = ProgramEnd("interrupted", 128 + signal.SIGTERM, "SIGTERM")
    except BaseException as exc:  # the program's own crash: show its traceback, keep going
        sys.stdout.flush()
        print("".join(_user_frames_only(exc).format()), end="", file=sys.stderr)
        end = ProgramEnd("crashed", 1, _error_line(exc))
    finally:
        if previous_sigterm is not None:
            signal.signal(signal.SIGTERM, previous_sigterm)
        session.uninstall()
        restore_torch_modes()
        _flush(sys.stdout)
        sys.stdout, sys.stderr = saved_streams
        sys.argv = saved_argv
        sys.path[:] = saved_path
        _return_to(saved_cwd)  # the program may have chdir'd: our relative paths are ours again
    if session.stopped and end.status != "crashed":
        end = ProgramEnd("stopped", 0)
    return end
