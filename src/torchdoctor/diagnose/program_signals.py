"""Signals while the program runs, and after it: ours for SIGTERM, then everything it set put back.

While the program runs, SIGTERM (a scheduler's or `timeout`'s stop) unwinds it like Ctrl-C, so
the report still comes (only over the default handler, and only in the main thread, where
signals are delivered). When it ends (finished, crashed, or stopped by us mid-training), the
handlers it installed are put back to what they were and the interval timers it armed are
cancelled: a program's watchdog (`signal.setitimer(ITIMER_REAL, 0.3)` re-armed every step,
raising TimeoutError) would otherwise fire into our report and what-if timings, and its
handlers for SIGINT or SIGUSR1 (save a checkpoint, exit) would run for a Ctrl-C meant for us.
"""

from __future__ import annotations

import os
import signal
import threading

_TIMERS = tuple(
    getattr(signal, name)
    for name in ("ITIMER_REAL", "ITIMER_VIRTUAL", "ITIMER_PROF")
    if hasattr(signal, name)
)


class Terminated(BaseException):
    """SIGTERM arrived while the program ran: unwind like Ctrl-C, keep the report."""


_OWNER = os.getpid()


def _raise_terminated(signum, frame):
    if os.getpid() != _OWNER:  # a child the program forked inherited it: SIGTERM's own end
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
        return
    raise Terminated


def _default_in_forked_child() -> None:
    """A process forked from the program (a multiprocessing.Pool worker, which `Pool.terminate()`
    ends with SIGTERM) is not the program we report on: it dies of SIGTERM as it would have
    without us, not with a Terminated traceback through our frame (milesial/Pytorch-UNet's
    `with Pool() as p:` printed one per worker)."""
    if signal.getsignal(signal.SIGTERM) is _raise_terminated:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_default_in_forked_child)


class ProgramSignals:
    """Made on the thread that runs the program, just before it runs; `restore()` after."""

    def __init__(self) -> None:
        self._main = threading.current_thread() is threading.main_thread()
        self._handlers = {}
        if not self._main:  # handlers can only be set from the main thread
            return
        for number in signal.valid_signals():
            handler = signal.getsignal(number)
            if handler is not None:  # None: set outside Python, cannot be put back from here
                self._handlers[number] = handler
        if self._handlers.get(signal.SIGTERM) is signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _raise_terminated)

    def restore(self) -> None:
        """From os._exit in another of the program's threads nothing can be put back (the
        process ends anyway)."""
        if not self._main or threading.current_thread() is not threading.main_thread():
            return
        for timer in _TIMERS:  # torchdoctor arms none of them: any one running is the program's
            signal.setitimer(timer, 0)
        for number, handler in self._handlers.items():
            if signal.getsignal(number) is not handler:
                try:
                    signal.signal(number, handler)
                except (OSError, ValueError):  # SIGKILL-like signals, or one we may not set
                    continue
