"""A program that trains in a thread of its own (`threading.Thread(target=train)`, the main thread
waiting in `join()`): our stop (StopDiagnosis) ends that thread, not the program.

Without this, Python prints the stop as "Exception in thread ..." with our frames, and the main
thread runs on past the measured steps (or waits forever for results the stopped thread would
have sent). While the program runs, a thread that ends with StopDiagnosis ends quietly, and the
thread that runs the program is stopped too: StopDiagnosis is raised there asynchronously
(CPython's PyThreadState_SetAsyncExc), at its next bytecode, which is right after `join()`
returns. A main thread blocked in a C call without end (`results.get()` on a queue the stopped
thread would have fed, a `time.sleep`, a socket read) runs no bytecode, so no asynchronous
exception reaches it: it is also sent SIGURG (ignored by default, so only where the program left
it so), whose handler raises StopDiagnosis there; Python interrupts a blocking lock, sleep or
system call to run a handler. The handler raises only while a stop is pending (the signal can
arrive after the program ended), and the program's handler for it is put back at its end
(ProgramSignals).
"""

from __future__ import annotations

import ctypes
import signal
import threading

from torchdoctor.diagnose.session import StopDiagnosis
from torchdoctor.intercept.patching import Patcher


def _raise_in(thread_id: int, exception: type[BaseException] | None) -> None:
    """Ask CPython to raise `exception` in that thread at its next bytecode (None: cancel)."""
    set_async_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc
    set_async_exc(ctypes.c_ulong(thread_id), ctypes.py_object(exception) if exception else None)


def _wake_signal() -> signal.Signals | None:
    """SIGURG where the program leaves it at its default (ignored): a signal of ours to wake the
    runner's thread from a blocking call; None where it has no such signal or uses it."""
    wake = getattr(signal, "SIGURG", None)
    if wake is None or signal.getsignal(wake) is not signal.SIG_DFL:
        return None
    return wake


class ThreadStop:
    """Installed on a Patcher while the program runs on the current thread; `finished()` is
    called (on that thread) once the program's code is done, before anything of ours runs."""

    def __init__(self, patcher: Patcher) -> None:
        self._runner = threading.get_ident()
        self._lock = threading.Lock()  # a stop is sent while the program runs, or never
        self._running = True
        self._sent = False
        self._wake = _wake_signal() if self._runner == threading.main_thread().ident else None
        if self._wake is not None:
            signal.signal(self._wake, self._stop_at_wake)
        patcher.replace(threading, "excepthook", self._wrap)

    def _stop_at_wake(self, signum, frame) -> None:
        # no lock here: a handler runs on the runner's thread, which may hold it in finished()
        if self._running and self._sent:
            raise StopDiagnosis

    def _wrap(self, original):
        def excepthook(args) -> None:
            if args.exc_type is None or not issubclass(args.exc_type, StopDiagnosis):
                original(args)
                return
            with self._lock:
                if self._running and threading.get_ident() != self._runner:
                    self._sent = True
                    _raise_in(self._runner, StopDiagnosis)
                    if (
                        self._wake is not None
                        and signal.getsignal(self._wake) == self._stop_at_wake
                    ):
                        # a runner blocked in C runs no bytecode: the handler raises there
                        signal.pthread_kill(self._runner, self._wake)

        return excepthook

    def finished(self) -> None:
        """The program's code ended: a stop sent too late for it must not land in ours."""
        with self._lock:
            self._running = False
            if self._sent:
                _raise_in(self._runner, None)
