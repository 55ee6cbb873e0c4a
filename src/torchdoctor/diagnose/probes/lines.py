"""Line sampler: which of the program's own lines the training thread is on, phase by phase.

A daemon thread wakes every INTERVAL_S while steps are measured, reads the training thread's
current frame (`sys._current_frames()`; no tracing, no `sys.setprofile`), and keeps the phase the
step tracker is in, the user frames on the stack (innermost first) and the library code the
innermost user line called. The training thread never runs any of this: its only cost is the
GIL the sampler takes for a few microseconds per sample (torch ops release the GIL, so a sample
usually lands while the training thread waits in one). Aggregation into `run.lines` happens after
the run (diagnose/line_profile.py).
"""

from __future__ import annotations

import os
import site
import sys
import sysconfig
import threading
import time

import torch

from torchdoctor.diagnose.callsite import is_library_file
from torchdoctor.diagnose.line_profile import OURS, TRAINING_PHASES, RawSample, build_lines
from torchdoctor.diagnose.probes.base import Probe

INTERVAL_S = 0.003  # about 330 Hz: a 30 ms step gets about ten samples
# While the sampler waits for the GIL, the training thread is asked to drop it after this long
# (Python's default is 5 ms). A sample is taken where the training thread drops the GIL: with
# 5 ms, Python work shorter than that (a NumPy loop of 2 ms) would be booked to the next line
# that releases the GIL (the next torch op). It only matters when another thread waits for the
# GIL, which the sampler does once per sample.
SWITCH_INTERVAL_S = 0.0002
MAX_SAMPLES = 200_000
MAX_TRANSITIONS = 400  # phase transitions whose callers are recorded (a few per step)  # about 400 s of measured steps; later samples are dropped (a note says so)
MAX_CHAIN = 6  # user frames kept per sample
MAX_CALLEES = 48  # library frames kept between the innermost user line and the running code


def _library_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    kinds = ("stdlib", "platstdlib", "purelib", "platlib", "scripts")  # scripts: console entries
    roots = {paths[k] for k in kinds if k in paths}
    roots.update(getattr(site, "getsitepackages", list)())
    roots.add(os.path.dirname(torch.__file__))
    return tuple(os.path.join(r, "") for r in roots if r)


_LIBRARY_ROOTS = _library_roots()
_PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# our probes' wrappers sit between the user's line and torch: not the callee to name
_OURS = tuple(os.path.join(_PACKAGE, part, "") for part in ("diagnose", "cli", "trials"))
_PACKAGES = (os.sep + "site-packages" + os.sep, os.sep + "dist-packages" + os.sep)


def is_user_file(filename: str) -> bool:
    """The program's own code: not torch, installed packages, the standard library, torchdoctor's
    machinery or generated code ("<string>", "<frozen ...>")."""
    if filename.startswith("<") or is_library_file(filename):
        return False
    return not filename.startswith(_LIBRARY_ROOTS) and not any(p in filename for p in _PACKAGES)


class LineSampler(Probe):
    def install(self, patcher) -> None:
        self.samples: list[RawSample] = []
        self.dropped = 0
        self._user: dict = {}  # code object -> is it the program's own code?
        self._main = threading.get_ident()
        self._bookkeeping = False  # the training thread is closing a step: our time, not theirs
        end_step = self.tracker.end_step

        def end_step_marked():
            self._bookkeeping = True
            try:
                return end_step()
            finally:
                self._bookkeeping = False

        self.tracker.end_step = end_step_marked  # type: ignore[method-assign]
        # user lines that call into training compute (the loop, a train_step() call), seen at
        # phase transitions: they hold the model's work, they are not hot spots themselves
        self.training_callers: set[tuple[str, int]] = set()
        self._transitions_left = MAX_TRANSITIONS
        self._paths_seen: set[tuple] = set()  # call paths already walked at a transition
        self.tracker.phase_listeners.append(self._phase_started)
        self._stop = threading.Event()
        self._switch_interval = sys.getswitchinterval()
        sys.setswitchinterval(min(self._switch_interval, SWITCH_INTERVAL_S))
        self._thread = threading.Thread(target=self._run, name="torchdoctor-lines", daemon=True)
        self._thread.start()

    def _phase_started(self, phase: str) -> None:
        if phase not in TRAINING_PHASES or self._transitions_left <= 0:
            return
        self._transitions_left -= 1
        frame = sys._getframe(1)
        # The same call path again (the loop's lines, every step) adds nothing: it is known by
        # its (code, instruction) pairs, which cost no line-number look-up to read.
        path = self._call_path(frame)
        if path in self._paths_seen:
            return
        self._paths_seen.add(path)
        users, _ = self._walk(frame)
        self.training_callers.update((code.co_filename, line) for code, line in users)

    def _call_path(self, frame) -> tuple:
        """(code, last instruction) of each frame up to the MAX_CHAIN-th user frame: what
        `_walk` would read, in a form that identifies its answer."""
        user_code = self._user
        path: list = []
        users = 0
        while frame is not None and users < MAX_CHAIN:
            code = frame.f_code
            mine = user_code.get(code)
            if mine is None:
                mine = user_code[code] = is_user_file(code.co_filename)
            users += mine
            path.append(code)
            path.append(frame.f_lasti)
            frame = frame.f_back
        return tuple(path)

    def stop(self) -> None:
        if self._phase_started in self.tracker.phase_listeners:
            self.tracker.phase_listeners.remove(self._phase_started)
        self._stop.set()
        sys.setswitchinterval(self._switch_interval)
        self.tracker.__dict__.pop("end_step", None)
        self._thread.join(timeout=1.0)

    def _run(self) -> None:
        current_frames = sys._current_frames
        clock = time.perf_counter
        tracker = self.tracker
        session = self.session
        main = self._main
        while not self._stop.wait(INTERVAL_S):
            if not session.measuring:
                continue
            frame = current_frames().get(main)
            if frame is None:
                continue
            stack = tracker.stack
            phase = OURS if self._bookkeeping else stack[-1] if stack else "other"
            if len(self.samples) >= MAX_SAMPLES:
                self.dropped += 1
                continue
            self.samples.append((clock(), phase, *self._walk(frame)))
            del frame

    def _walk(self, frame) -> tuple[tuple, tuple]:
        """(user frames innermost first as (code, line), library code objects the innermost
        user line called, outermost first)."""
        user_code = self._user
        users: list = []
        below: list = []
        while frame is not None and len(users) < MAX_CHAIN:
            code = frame.f_code
            mine = user_code.get(code)
            if mine is None:
                mine = user_code[code] = is_user_file(code.co_filename)
            if mine:
                # f_lineno is None while a frame runs an instruction with no line (Python 3.11+,
                # seen on a sampled frame): its function's first line stands in
                users.append((code, frame.f_lineno or code.co_firstlineno))
            elif not users and not code.co_filename.startswith(_OURS):
                below.append(code)
            frame = frame.f_back
        return tuple(users), tuple(below[-MAX_CALLEES:][::-1])

    def contribute(self, run, measured) -> None:
        windows = [(r.start, r.end, r.wall) for r in measured]
        run.lines = build_lines(
            self.samples,
            origin=self.tracker.origin,
            windows=windows,
            evaluation=self.tracker.evaluation_windows(),
            interval_s=INTERVAL_S,
            training_callers=self.training_callers,
        )
        if self.dropped:
            run.notes.append(
                f"line profile: the first {MAX_SAMPLES} samples only ({self.dropped} later "
                "ones dropped to bound memory)"
            )
        self.samples = []
