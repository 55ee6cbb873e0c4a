"""Run an unmodified Python program in this process, the way `python script.py` / `python -m`
would, while a diagnosis Session watches it.

`__main__` semantics are Python's own (`-m`, a directory or a zip through runpy's
`_run_module_as_main`, as Python runs them); sys.argv is the program's argv and sys.path[0] its directory
(the current directory for -m), it runs in the Program's working directory, and everything
(the working directory, sys.stdout and sys.stderr included) is put back afterwards. The
program's own output goes straight to our stdout/stderr. Its end is classified: finished,
stopped by us after the measured steps, crashed (its traceback is printed with only its own
frames, never ours), interrupted (Ctrl-C, or SIGTERM: exit code 143 with the report), or exited
via sys.exit (the code is kept)."""

from __future__ import annotations

import atexit
import builtins
import contextlib
import io
import linecache
import os
import pkgutil
import runpy
import signal
import sys
import tokenize
import traceback
import types
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import NoReturn

from torchdoctor.diagnose.callsite import (
    installed_package,
    is_library_file,
    is_runner_file,
    without_our_frame_lines,
)
from torchdoctor.diagnose.program_exec import ExecAgain, flush_quietly, watch_exec
from torchdoctor.diagnose.program_exit import (
    EXIT_FLUSH_FAILED,
    ProgramExitHandlers,
    ProgramRemains,
    streams_fail_at_exit,
)
from torchdoctor.diagnose.program_signals import ProgramSignals, Terminated
from torchdoctor.diagnose.recursion_room import RecursionRoom
from torchdoctor.diagnose.session import Session, StopDiagnosis
from torchdoctor.diagnose.thread_stop import ThreadStop
from torchdoctor.intercept.patching import Patcher, raised_by_the_original
from torchdoctor.program import Program


@dataclass
class ProgramEnd:
    status: str  # "completed", "stopped", "crashed", "interrupted"
    exit_code: int
    error: str | None = None
    # its namespace and streams, for what Python's exit does with them after the program
    remains: ProgramRemains | None = field(default=None, repr=False, compare=False)


def _exit_code(code) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # sys.exit("message"): Python prints it and exits 1
    return 1


def program_traceback(exc: BaseException) -> traceback.TracebackException:
    """The traceback as Python would print it, minus torchdoctor's frames (torch's and runpy's
    stay, as Python shows them)."""
    report = traceback.TracebackException.from_exception(exc)
    pending = [report]
    while pending:
        current = pending.pop()
        kept = [frame for frame in current.stack if not is_runner_file(frame.filename)]
        current.stack = traceback.StackSummary.from_list(kept)
        pending.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return report


_DIAGNOSE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _raised_by_a_probe(exc: BaseException) -> str | None:
    """`file:line` when the exception was raised in torchdoctor's own diagnose code (a bug in a
    probe's hook), not by the program or by torch: it must not be shown as the user's crash. An
    error that a wrapped torch function raised through our wrapper (`.item()` of a 16-element
    tensor) is the program's."""
    tb = exc.__traceback__
    if tb is None:
        return None
    while tb.tb_next is not None:
        tb = tb.tb_next
    filename = tb.tb_frame.f_code.co_filename
    if not filename.startswith(_DIAGNOSE_DIR) or raised_by_the_original(tb):
        return None
    if tb.tb_frame.f_code is _run_path.__code__:  # compiling the program: its SyntaxError
        return None
    return f"{os.path.relpath(filename, _DIAGNOSE_DIR)}:{tb.tb_lineno}"


_STANDARD_LIBRARY = os.path.dirname(os.__file__) + os.sep


def _is_program_file(filename: str) -> bool:
    """The program's own code: not torch's, ours, an installed package's or the standard
    library's."""
    return not (
        is_library_file(filename)
        or installed_package(filename)
        or filename.startswith(_STANDARD_LIBRARY)
    )


def _print_traceback(exc: BaseException) -> None:
    """The program's traceback, after what it printed, as Python prints it at the program's end:
    through the program's own sys.excepthook when it set one (rich.traceback.install(), a
    logger's hook), with our frames taken out of the traceback it gets."""
    flush_quietly(sys.stdout)
    hook = sys.excepthook
    if hook is not sys.__excepthook__:
        try:
            with _without_our_frames(exc):
                hook(type(exc), exc, exc.__traceback__)
            return
        except Exception:  # a hook that fails: Python prints both; the traceback is what counts
            pass
    try:
        sys.stderr.write("")  # a broken writer (a Tee whose log file it closed): _to_stderr's
    except Exception:
        _to_stderr("".join(program_traceback(exc).format()))
        return
    # Python's own printer, as at the program's end: its source lines are the ones Python finds
    # (none for a zip app's __main__.py, where `traceback` would read the zip)
    with _without_our_frames(exc):
        sys.__excepthook__(type(exc), exc, exc.__traceback__)
    flush_quietly(sys.stderr)


_EXCEPTION_GROUPS = getattr(builtins, "BaseExceptionGroup", ())  # Python >= 3.11


@contextlib.contextmanager
def _without_our_frames(exc: BaseException) -> Iterator[None]:
    """For the moment of printing: the exception, its causes, contexts and group members carry
    tracebacks without torchdoctor's frames."""
    saved: dict[int, tuple[BaseException, types.TracebackType | None, tuple]] = {}
    pending = [exc]
    while pending:
        current = pending.pop()
        if id(current) in saved:
            continue
        saved[id(current)] = current, current.__traceback__, current.args
        current.__traceback__ = _program_frames(current.__traceback__)
        _without_our_frames_in_message(current)
        pending.extend(e for e in (current.__cause__, current.__context__) if e is not None)
        if isinstance(current, _EXCEPTION_GROUPS):
            pending.extend(current.exceptions)
    try:
        yield
    finally:
        for current, tb, args in saved.values():
            current.__traceback__ = tb
            if current.args is not args:
                current.args = args


def _without_our_frames_in_message(exc: BaseException) -> None:
    """A message that lists frames (dynamo's "from user code:" stack, written into the
    exception's text) loses ours, as the traceback does."""
    message = exc.args[0] if exc.args and isinstance(exc.args[0], str) else None
    if message is None:
        return
    cleaned = without_our_frame_lines(message)
    if cleaned != message:
        try:
            exc.args = (cleaned, *exc.args[1:])
        except Exception:  # an exception class that refuses new args: printed as it is
            pass


def _to_stderr(text: str) -> None:
    """To the program's sys.stderr; where that stream fails (a Tee logger whose log file the
    program closed), to the process's own stderr, as Python falls back to at its end."""
    try:
        sys.stderr.write("")  # a broken writer fails here, before part of the text got out
    except Exception:
        print(text, end="", file=sys.__stderr__)
        return
    try:
        print(text, end="", file=sys.stderr)
        flush_quietly(sys.stderr)
    except Exception:
        print(text, end="", file=sys.__stderr__)


def _program_frames(tb: types.TracebackType | None) -> types.TracebackType | None:
    """The traceback without torchdoctor's frames (the program's and its libraries')."""
    kept = []
    while tb is not None:
        if not is_runner_file(tb.tb_frame.f_code.co_filename):
            kept.append(tb)
        tb = tb.tb_next
    rebuilt = None
    for entry in reversed(kept):
        rebuilt = types.TracebackType(rebuilt, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return rebuilt


def _report_crash(exc: BaseException) -> ProgramEnd:
    """The program's own crash: its traceback with its frames only. A probe's bug: the whole
    traceback, and the report says it was torchdoctor's."""
    ours = _raised_by_a_probe(exc)
    if ours is None:
        _print_traceback(exc)
        return ProgramEnd("crashed", 1, _error_line(exc))
    flush_quietly(sys.stdout)
    _to_stderr(
        "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        + f"torchdoctor: internal error in diagnose/{ours} (a torchdoctor bug, not your "
        "program's): please report it\n"
    )
    return ProgramEnd(
        "crashed", 1, f"torchdoctor internal error at diagnose/{ours}: {_error_line(exc)}"
    )


def _error_line(exc: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()[-1]


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


def _run_path(path: str, main: types.ModuleType) -> None:
    """`python path` as __main__: __file__ (and the code's file name) absolute, as Python 3.9+
    sets them, so a program that changes directory still finds its own files through
    os.path.dirname(__file__); sys.argv[0] stays as typed (runpy.run_path would set both to
    the same name). A directory or a zip: its `__main__` from sys.path[0], as Python runs it."""
    if os.path.isdir(path) or zipfile.is_zipfile(path):
        _run_as_main("__main__", alter_argv=False, main=main)
        return
    with io.open_code(path) as source:
        code = pkgutil.read_code(source) if path.endswith((".pyc", ".pyo")) else None
    if code is None:  # source (or a .pyc of another Python: compiling it fails as Python's does)
        with io.open_code(path) as source:
            code = compile(source.read(), path, "exec", dont_inherit=True)
    main.__dict__.update(__file__=path, __cached__=None, __loader__=None, __spec__=None)
    saved_main = sys.modules.get("__main__")
    sys.modules["__main__"] = main
    try:
        exec(code, main.__dict__)
    finally:
        if saved_main is not None:
            sys.modules["__main__"] = saved_main


def _script_source(path: str) -> str | None:
    """The script's text as it runs (None: a folder, a zip, compiled code, unreadable)."""
    if not path.endswith(".py") or not os.path.isfile(path):
        return None
    try:
        with tokenize.open(path) as source:  # its coding cookie, as Python reads it
            return source.read()
    except (OSError, SyntaxError, UnicodeDecodeError):
        return None


def _keep_source_of_a_removed_script(path: str, source: str | None) -> None:
    """A program that removed its own script (a generated one, cleaned up at its start): the
    report quotes its lines from the text that ran. Only after the run: a traceback printed
    while it runs shows no source line, as plainly."""
    if source is not None and not os.path.exists(path):
        lines = source.splitlines(keepends=True)
        linecache.cache[path] = (len(source), None, lines, path)  # no mtime: never re-read


def _run_as_main(module: str, alter_argv: bool, main: types.ModuleType) -> None:
    """`python -m module` (alter_argv) or `python dir_or_zip` (`__main__` found on sys.path[0]):
    through runpy's `_run_module_as_main`, the function Python itself calls for both, so the
    program's traceback starts with the same `<frozen runpy>` frames as its plain run's. It runs
    the code in `sys.modules["__main__"]`'s namespace: a fresh module, not ours."""
    saved_main = sys.modules.get("__main__")
    sys.modules["__main__"] = main
    try:
        runpy._run_module_as_main(module, alter_argv=alter_argv)  # type: ignore[attr-defined]
    finally:
        if saved_main is not None:
            sys.modules["__main__"] = saved_main


_STDOUT = 1


def _descriptor(stream) -> tuple[int, int] | None:
    """What the stream's file descriptor is open on (device, inode); None: closed, or no file."""
    try:
        return _descriptor_of(stream.fileno())
    except (OSError, ValueError, AttributeError):
        return None


def _descriptor_of(descriptor: int) -> tuple[int, int] | None:
    try:
        status = os.fstat(descriptor)
    except OSError:
        return None
    return status.st_dev, status.st_ino


def _stdout_kept(before: tuple[int, int] | None) -> None:
    """The program closed our stdout at its end (`sys.stdout.close()`, `os.close(1)`), or pointed
    descriptor 1 at a file of its own (`os.dup2(log.fileno(), 1)`; a file it opens after closing
    1 gets that number too): the report must neither fail there nor land in its file. It goes to
    /dev/null, with a note; report files and the exit code still come."""
    if before is None or _descriptor(sys.stdout) == before:
        return
    if getattr(sys.stdout, "closed", False) and _descriptor_of(_STDOUT) == before:
        # `sys.stdout.close()` closes Python's stream, not descriptor 1 (Python opened it with
        # closefd=False): the report goes where the program's output went, on a stream of ours
        encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
        sys.stdout = open(_STDOUT, "w", encoding=encoding, closefd=False)  # noqa: SIM115
        return
    sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 (ours to the exit)
    print(
        "torchdoctor: the program closed or redirected standard output: no report printed "
        "(--json FILE or --html FILE keep it)",
        file=sys.stderr,
    )


def _return_to(directory: str) -> None:
    try:
        os.chdir(directory)
    except OSError:  # the program removed it: stay where it left us
        pass


def _hard_exit_patch(
    patcher: Patcher, on_hard_exit: Callable[[ProgramEnd], None], cleanup: Callable[[], None]
) -> None:
    """os._exit(code) skips every handler, ours included: the program would end without a
    report (scripts call it to get past hung DataLoader workers or NCCL at their end). While
    the program runs, os._exit in this process first puts everything back and hands the end to
    `on_hard_exit` (which writes the report), then exits as asked. Forked children (DataLoader
    workers end with os._exit) exit at once."""
    owner = os.getpid()

    def make_exit(real_exit):
        return lambda code: _exit(real_exit, code)

    def _exit(real_exit, code):
        if os.getpid() != owner:
            real_exit(code)
        try:
            cleanup()
            on_hard_exit(ProgramEnd("completed", int(code)))
        except BaseException as exc:  # never keep the program from exiting
            print(f"torchdoctor: error: no report at os._exit: {_error_line(exc)}", file=sys.stderr)
        finally:
            flush_quietly(sys.stdout)
            flush_quietly(sys.stderr)
            real_exit(code)

    patcher.replace(os, "_exit", make_exit)


def _end_forked_child(exit_code: int) -> NoReturn:
    """A child the program forked (os.fork) ran to the program's end: it exits as it would
    without us (its atexit handlers run, its output is flushed) and writes no report: the
    parent writes the one report, and the child's would overwrite its files."""
    try:
        atexit._run_exitfuncs()
    finally:
        flush_quietly(sys.stdout)
        flush_quietly(sys.stderr)
        os._exit(exit_code)


def run_program(
    session: Session,
    program: Program,
    on_hard_exit: Callable[[ProgramEnd], None] | None = None,
    diagnose_args: Sequence[str] | None = None,
) -> ProgramEnd:
    """Run the program with the session's probes installed; never raises for the program's sake.
    `on_hard_exit`: called (everything put back) when the program calls os._exit, before exiting.
    `diagnose_args`: the `torchdoctor` words that diagnose it again when it os.exec's itself
    (diagnose/program_exec.py); None: the exec runs as asked, after a note."""
    saved_argv, saved_path, saved_cwd = sys.argv[:], sys.path[:], os.getcwd()
    owner = os.getpid()  # a child the program forks with os.fork runs on to here too
    saved_streams = sys.stdout, sys.stderr  # the program may point them at its own log file
    stdout_file = _descriptor(sys.stdout)  # and close or redirect what descriptor 1 is
    sys.argv = [program.target, *program.argv]  # for -m, runpy puts the module's file first
    if sys.path:
        sys.path[0] = program.sys_path_entry  # as `python script.py` / `python -m` set it
    else:
        sys.path.append(program.sys_path_entry)
    _return_to(program.cwd)  # where the program was named; the same directory unless told
    program_signals = ProgramSignals()  # ours for SIGTERM; the program's put back at its end
    restore_torch_modes = _torch_modes()
    process_patches = Patcher()  # the process's own functions we replace while it runs

    program_streams = saved_streams  # what it left as sys.stdout and sys.stderr

    def cleanup(program_ended: bool = True) -> None:
        """`program_ended`: False at os._exit, where no exit handler runs."""
        nonlocal program_streams
        process_patches.restore()
        recursion_room.restore()
        program_signals.restore()
        session.uninstall()
        restore_torch_modes()
        if program_ended:  # before the report, to the streams the program left, as at its exit
            exit_handlers.run()
        flush_quietly(sys.stdout)
        program_streams = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = saved_streams
        _stdout_kept(stdout_file)
        if session.stdout_mid_line:  # a progress line left open: the report starts on its own
            print(file=sys.stdout)
        sys.argv = saved_argv
        sys.path[:] = saved_path
        _return_to(saved_cwd)  # the program may have chdir'd: our relative paths are ours again

    def hard_exit(end: ProgramEnd) -> None:
        on_hard_exit(ProgramEnd("stopped", 0) if session.stopped else end)

    session.install()
    exit_handlers = ProgramExitHandlers(process_patches, _is_program_file)
    if on_hard_exit is not None:
        _hard_exit_patch(process_patches, hard_exit, lambda: cleanup(program_ended=False))
    thread_stop = ThreadStop(process_patches)  # a stop in the program's own training thread
    exec_again = None
    if diagnose_args is not None:
        exec_again = ExecAgain(diagnose_args, steps_run=lambda: session.tracker.index)
    watch_exec(process_patches, program, exec_again)
    recursion_room = RecursionRoom(process_patches)  # made here: counts the frames above this
    main = types.ModuleType("__main__")  # the program's namespace: a fresh module, not ours
    script = os.path.abspath(program.path)
    source = None if program.module else _script_source(script)
    try:
        if program.module:
            _run_as_main(program.target, alter_argv=True, main=main)
        else:
            _run_path(script, main)
        end = ProgramEnd("completed", 0)
    except StopDiagnosis:
        end = ProgramEnd("stopped", 0)
    except SystemExit as exc:
        end = ProgramEnd("completed", _exit_code(exc.code))
    except KeyboardInterrupt as exc:  # Ctrl-C, or the program's own raise: Python shows where
        _print_traceback(exc)
        end = ProgramEnd("interrupted", 130, "KeyboardInterrupt")
    except Terminated:
        end = ProgramEnd("interrupted", 128 + signal.SIGTERM, "SIGTERM")
    except BaseException as exc:  # the program's crash (or a probe's bug): say so, keep going
        session.program_crashed(exc)  # while its frames (and their tensors) are still alive
        end = _report_crash(exc)
    finally:
        thread_stop.finished()
        cleanup()
    _keep_source_of_a_removed_script(script, source)
    if os.getpid() != owner:
        _end_forked_child(end.exit_code)
    remains = ProgramRemains(main.__dict__, program_streams)
    if session.stopped and end.status != "crashed":
        return ProgramEnd("stopped", 0, remains=remains)
    # its own writers in place of ours: Python's exit would flush them, after the program's end
    own_streams = tuple(
        stream if stream is not ours else None
        for stream, ours in zip(program_streams, saved_streams)
    )
    if end.status in ("completed", "crashed") and streams_fail_at_exit(own_streams):
        end = ProgramEnd(end.status, EXIT_FLUSH_FAILED, end.error)
    end.remains = remains
    return end
