"""A program that trains in a thread of its own (`threading.Thread(target=train)`, the main thread
waiting in `join()`): our stop (StopDiagnosis) ends that thread, not the program.

Without this, Python prints the stop as "Exception in thread ..." with our frames, and the main
thread runs on past the measured steps (or waits forever for results the stopped thread would
have sent). While the program runs, a thread that ends with StopDiagnosis ends quietly, and the
thread that runs the program is stopped too: StopDiagnosis is raised there asynchronously
(CPython's PyThreadState_SetAsyncExc), at its next bytecode, which is right after `join()`
returns. A thread blocked in a C call without end (a `queue.get()` no one will feed) stays
blocked: no exception reaches a thread that runs no bytecode.
"""

from __future__ import annotations

import ctypes
import threading

from torchdoctor.diagnose.session import StopDiagnosis
from torchdoctor.intercept.patching import Patcher


def _raise_in(thread_id: int, exception: type[BaseException] | None) -> None:
    """Ask CPython to raise `exception` in that thread at its next bytecode (None: cancel)."""
    set_async_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc
    set_async_exc(ctypes.c_ulong(thread_id), ctypes.py_object(exception) if exception else None)


class ThreadStop:
    """Installed on a Patcher while the program runs on the current thread; `finished()` is
    called (on that thread) once the program's code is done, before anything of ours runs."""

    def __init__(self, patcher: Patcher) -> None:
        self._runner = threading.get_ident()
        self._lock = threading.Lock()  # a stop is sent while the program runs, or never
        self._running = True
        self._sent = False
        patcher.replace(threading, "excepthook", self._wrap)

    def _wrap(self, original):
        def excepthook(args) -> None:
            if args.exc_type is None or not issubclass(args.exc_type, StopDiagnosis):
                original(args)
                return
            with self._lock:
                if self._running and threading.get_ident() != self._runner:
                    self._sent = True
                    _raise_in(self._runner, StopDiagnosis)

        return excepthook

    def finished(self) -> None:
        """The program's code ended: a stop sent too late for it must not land in ours."""
        with self._lock:
            self._running = False
            if self._sent:
                _raise_in(self._runner, None)
