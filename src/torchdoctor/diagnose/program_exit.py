"""The end of `torchdoctor diagnose`, once the report is out: exit with the program's code, as
Python would exit after it, without hanging where the program would not.

Python waits for every non-daemon thread before it exits. After the program ran to its end, a
thread of its own that is still running (a consumer blocked on a `queue.get()` no one feeds) keeps
the process alive without torchdoctor too: we wait as Python does, and say why the command has
not ended. After our stop, the program's threads may wait for the part of it we stopped (a
prefetch thread blocked on a full queue, a logger looping until the training sets its event, a
non-daemon `multiprocessing` child reading a queue until the training sends its end):
without the stop they would have ended, so once they had a moment to finish on their own, the
process exits without them (its child processes terminated; the program's atexit handlers run first and its open files are
flushed, as at any exit), and says so.
"""

from __future__ import annotations

import atexit
import gc
import io
import os
import sys
import threading
import time
import weakref
from collections.abc import Callable
from typing import NoReturn

_FILE = getattr(io, "_IOBase", io.IOBase)  # the C base of every file object
GRACE_S = 2.0  # what a program thread gets to end on its own after our stop (a last write)


def _waited_for() -> list:
    """What Python's exit waits for: non-daemon threads, and the non-daemon child processes of
    `multiprocessing` (its atexit handler joins them). Threads and processes both have
    `.name`, `.join(timeout)` and `.is_alive()`."""
    main = threading.main_thread()
    waited: list = [
        t for t in threading.enumerate() if t is not main and not t.daemon and t.is_alive()
    ]
    multiprocessing = sys.modules.get("multiprocessing")  # never imported here: none started
    if multiprocessing is not None:
        waited += [child for child in multiprocessing.active_children() if not child.daemon]
    return waited


def _named(waited: list) -> str:
    threads = sum(isinstance(w, threading.Thread) for w in waited)
    names = ", ".join(repr(w.name) for w in waited[:3])
    more = f" and {len(waited) - 3} more" if len(waited) > 3 else ""
    if len(waited) == 1:
        return f"{'thread' if threads else 'process'} {names} is"
    kinds = "threads" if threads == len(waited) else "processes" if not threads else "threads"
    kinds += " and processes" if 0 < threads < len(waited) else ""
    return f"{kinds} {names}{more} are"


def _flush_all() -> None:
    """What Python's own exit does for the files still open (a log the program opened at its
    top and never closed): their buffered lines are written before the process ends."""
    # by type: isinstance would read __class__, which a lazy module's proxy answers with a warning
    open_files = [obj for obj in gc.get_objects() if issubclass(type(obj), _FILE)]
    for stream in (*open_files, sys.stdout, sys.stderr):
        try:
            if not stream.closed and stream.writable():
                stream.flush()
        except (OSError, ValueError, AttributeError):
            pass


EXIT_FLUSH_FAILED = 120  # Python's exit code when flushing sys.stdout/stderr at its exit fails


def streams_fail_at_exit(streams: tuple) -> bool:
    """Flush the program's own sys.stdout and sys.stderr, as Python's exit does (the program
    pointed them at a writer of its own, which diagnose has put back by now): True when one
    fails (a Tee whose log file the program closed, a log server gone), where the plain run's
    Python exits 120 instead of the program's code. A failing stdout is shown as Python shows
    it; a failing stderr silently, as Python can print nothing there."""
    failed = False
    for name, stream in zip(("stdout", "stderr"), streams):
        try:
            closed = bool(getattr(stream, "closed", False))
        except Exception:  # Python takes a `closed` that cannot be read as open
            closed = False
        if stream is None or closed:
            continue
        try:
            stream.flush()
        except Exception as exc:
            failed = True
            if name == "stdout":
                _ignored_on_flush(stream, exc)
    return failed


def _ignored_on_flush(stream, exc: BaseException) -> None:
    from torchdoctor.diagnose.runner import program_traceback

    where = (
        "on flushing sys.stdout:" if sys.version_info >= (3, 13) else f"in: {stream!r}"
    )  # Python's own words
    text = "".join(program_traceback(exc).format())
    print(f"Exception ignored {where}\n{text}", end="", file=sys.__stderr__, flush=True)


class ProgramExitHandlers:
    """The `atexit` handlers the program's own code registers (a summary written and printed at
    its end), and its `weakref.finalize` callbacks. Python runs them at the process's exit,
    after the program: under diagnose that is after the report, where their output would follow
    ours. While the program runs, `atexit.register` and `weakref.finalize` called from the
    program's code are noted; at its end, unless a thread of its own still runs (Python would
    wait for it first), they run in Python's order, last first, with an error shown as Python
    shows it, and are taken off atexit's list."""

    def __init__(self, patcher, is_program_file: Callable[[str], bool]) -> None:
        self._registered: list[tuple[Callable, tuple, dict]] = []
        owner = os.getpid()

        def make_register(real_register):
            def register(func, *args, **kwargs):
                caller = sys._getframe(1).f_code.co_filename
                if os.getpid() == owner and is_program_file(caller):
                    self._registered.append((func, args, kwargs))
                return real_register(func, *args, **kwargs)

            return register

        def make_unregister(real_unregister):
            def unregister(func):
                self._registered = [entry for entry in self._registered if entry[0] != func]
                return real_unregister(func)

            return unregister

        def make_finalize(real_init):
            def init(finalizer, *args, **kwargs):
                real_init(finalizer, *args, **kwargs)
                caller = sys._getframe(1).f_code.co_filename
                if os.getpid() == owner and is_program_file(caller):
                    self._finalizers.append(finalizer)

            return init

        self._finalizers: list[weakref.finalize] = []
        patcher.replace(atexit, "register", make_register)
        patcher.replace(atexit, "unregister", make_unregister)
        patcher.replace(weakref.finalize, "__init__", make_finalize)

    def run(self) -> None:
        """Run the noted handlers now (where Python's exit would not wait for threads first),
        then the program's `weakref.finalize` callbacks still pending (their `atexit` left on),
        last made first, as weakref's own exit handler runs them."""
        if _waited_for():
            return
        self._run_handlers()
        finalizers, self._finalizers = self._finalizers, []
        for finalizer in reversed(finalizers):
            if finalizer.alive and finalizer.atexit:
                try:
                    finalizer()
                except BaseException:  # weakref's exit handler shows it through the hook
                    sys.excepthook(*sys.exc_info())

    def _run_handlers(self) -> None:
        if not self._registered:
            return
        registered, self._registered = self._registered, []
        for func, _, _ in registered:
            atexit.unregister(func)
        for func, args, kwargs in reversed(registered):
            try:
                func(*args, **kwargs)
            except SystemExit:  # Python ignores it in an exit handler
                pass
            except BaseException as exc:
                from torchdoctor.diagnose.runner import program_traceback

                text = "".join(program_traceback(exc).format())
                print(f"Exception ignored in atexit callback: {func!r}", file=sys.stderr)
                print(text, end="", file=sys.stderr, flush=True)


class ProgramRemains:
    """What the program leaves to Python's exit: its `__main__` namespace and the streams it left
    as sys.stdout and sys.stderr. After the program's last line (and its atexit handlers),
    Python's exit lets the namespace go, and the objects only it held are finalized: a `__del__`
    that prints or writes a file, a progress bar closed by its own `__del__`. Under diagnose the
    namespace outlives the program (the what-if probes use its objects after the run), so that
    came after the report. `release()` does it once the report is built, before it is printed."""

    def __init__(self, namespace: dict, streams: tuple) -> None:
        self._namespace: dict | None = namespace
        self._streams = streams

    def release(self) -> None:
        """Let the namespace go as Python's exit does, printing to the program's streams: first
        dropped, its objects finalized by a collection with the names still there to use; where
        something else still holds it, cleared (names with one leading underscore first, then
        the others but `__builtins__`). Not while a thread other than the main one runs: Python
        would wait for a non-daemon one first, and a daemon one may still use the names."""
        namespace, self._namespace = self._namespace, None
        if namespace is None or threading.active_count() > 1:
            return
        saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = self._streams
        try:
            marker = _Marker()
            namespace[_MARKER] = marker  # gone with the namespace: it was nobody else's
            namespace_gone = weakref.ref(marker)
            del marker, namespace
            gc.collect()
            namespace = _still_held(namespace_gone)
            if namespace is not None:
                _clear_module_dict(namespace)
                gc.collect()  # what lives in reference cycles
            _flush(sys.stdout)
        finally:
            sys.stdout, sys.stderr = saved


_MARKER = "__torchdoctor_exit_marker__"


class _Marker:
    pass


def _still_held(marker_ref: weakref.ref) -> dict | None:
    """The namespace the marker lives in, when it survived the collection."""
    marker = marker_ref()
    if marker is None:
        return None
    for holder in gc.get_referrers(marker):
        if isinstance(holder, dict) and holder.get(_MARKER) is marker:
            del holder[_MARKER]
            return holder
    return None


def _clear_module_dict(namespace: dict) -> None:
    """CPython's `_PyModule_ClearDict`, as its exit clears a module still alive."""
    for first_pass in (True, False):
        for name in list(namespace):
            single_underscore = name.startswith("_") and not name.startswith("__")
            if name != "__builtins__" and (single_underscore or not first_pass):
                namespace[name] = None


def _flush(stream) -> None:
    try:
        stream.flush()
    except (OSError, ValueError, AttributeError):  # closed or odd stream: it was the program's
        pass


def exit_after_program(code: int, stopped: bool) -> NoReturn:
    """Exit with `code`; `stopped`: diagnose stopped the program after its measured steps.

    Python's exit runs on: a thread pool's idle workers, for one, end within it. Only what is
    still there GRACE_S later is named, by a watcher thread (a daemon: it ends with the process).
    """
    if _waited_for():
        watcher = threading.Thread(
            target=_still_waiting, args=(code, stopped), name=WATCHER, daemon=True
        )
        watcher.start()
    sys.exit(code)


WATCHER = "torchdoctor-exit"


def _still_waiting(code: int, stopped: bool) -> None:
    time.sleep(GRACE_S)
    left = _waited_for()
    if not left:
        return
    if not stopped:
        print(
            f"torchdoctor: note: the program's {_named(left)} still running after it ended: "
            "Python waits for it before exiting, as it would without torchdoctor (Ctrl-C to stop)",
            file=sys.stderr,
            flush=True,
        )
        return
    print(
        f"torchdoctor: note: the program's {_named(left)} still running {GRACE_S:.0f} s after "
        "diagnose stopped it (waiting for the part that was stopped): exiting without it",
        file=sys.stderr,
    )
    for child in left:  # a child process would wait on, orphaned: ended as Ctrl-C would end it
        if not isinstance(child, threading.Thread):
            child.terminate()
            child.join(1.0)
    try:
        atexit._run_exitfuncs()  # Python's exit waits in its join of the threads: they are next
    finally:
        _flush_all()
        os._exit(code)
