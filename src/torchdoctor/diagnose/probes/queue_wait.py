"""Queue probe: the training thread's wait on a queue that the program's own producer fills.

A program that loads its batches in a thread (or process) of its own hands them over through a
`queue.Queue` (or a `multiprocessing` queue): the training thread's blocking `get()` is its wait
for data, as a DataLoader's `next()` is. Outside every phase it was "other"; here it is "data"
(and a data wait, judged with the forwards like a loader's). Only a blocking `get()` by the thread
that runs the program, outside any other phase: a DataLoader's own queues are read inside its
`next()` (already data), and other threads' gets are theirs.
"""

from __future__ import annotations

import multiprocessing.queues
import queue
import threading
import time

from torchdoctor.diagnose.probes.base import Probe


class QueueWaitProbe(Probe):
    def install(self, patcher) -> None:
        # the thread that runs the program (a program training in a thread of its own keeps its
        # queue waits in "other", as before)
        self._thread = threading.get_ident()
        self.waits = 0
        patcher.replace(queue.Queue, "get", self._wrap_get)
        patcher.replace(multiprocessing.queues.Queue, "get", self._wrap_get)

    def _wrap_get(self, original):
        probe = self
        tracker = self.tracker
        thread = self._thread
        get_ident = threading.get_ident

        def get(self, block=True, timeout=None):
            if not block or tracker.stack or get_ident() != thread:
                return original(self, block, timeout)
            probe.waits += 1
            tracker.push("data")
            started = time.perf_counter()
            try:
                return original(self, block, timeout)
            finally:
                tracker.pop()
                tracker.data_wait(started, time.perf_counter(), False)

        return get

    def contribute(self, run, measured) -> None:
        run.queue_waits = self.waits
