"""Line sampler: which of the program's own lines the training thread is on, phase by phase.

A daemon thread wakes while steps are measured, reads the training thread's current frame
(`sys._current_frames()`; no tracing, no `sys.setprofile`), and keeps the phase the step tracker
is in, the user frames on the stack (innermost first) and the library code the innermost user
line called. The training thread never runs any of this: its cost is the GIL the sampler holds
per sample (torch ops release the GIL, so a sample usually lands while the training thread waits
in one, but an op that ends meanwhile waits for the sampler to let go). So a sample is kept raw
while the GIL is held: code objects and instruction offsets, no line numbers (reading
`f_lineno` scans the code's line table); lines are looked up after the run.

How many samples: what the line findings need is a number of samples per run, not per step (a
line holding 5% of the time gets 5% of them). The first FULL_RATE_SAMPLES are taken every
INTERVAL_S; after that the interval grows with the samples already taken, so a long run still
adds samples (their number grows as the square root of the measured time) while the training
thread's cost per second falls as 1/sqrt of it. Aggregation into `run.lines` happens after the
run (diagnose/line_profile.py); each sample stands for the time since the one before it.

On a busy core the training thread also waits for a CPU, and Linux makes it wait mostly where it
enters the kernel (a syscall). That wait is real time at that line, and the samples book it
there, as the step tracker's clock does; so the training thread's own per-step path makes few
syscalls (the tracker reads its CPU time on one step in eight: diagnose/steps.py), else our step
close takes the wait that belongs to the whole step (bench/sampler_contention.py measures it).
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

INTERVAL_S = 0.003  # the full rate, about 330 Hz: a 30 ms step gets about ten samples
# Samples taken at the full rate: a line holding 5% of the run gets ~15 (3 name it; rules/_lines).
# Beyond them the n-th sample waits INTERVAL_S * n / FULL_RATE_SAMPLES (sampling_interval).
FULL_RATE_SAMPLES = 300
# While the sampler waits for the GIL, the training thread is asked to drop it after this long
# (Python's default is 5 ms). A sample is taken where the training thread drops the GIL: with
# 5 ms, Python work shorter than that (a NumPy loop of 2 ms) would be booked to the next line
# that releases the GIL (the next torch op). It only matters when another thread waits for the
# GIL, which the sampler does once per sample. At 0.2 ms, a progress bar's 0.23 ms redraw in pure
# Python was sampled in 1 of its steps (0.5% of the step) at idle on a fast CPU, its share going
# to the torch ops around it (which drop the GIL): a Python line is seen only past this interval.
SWITCH_INTERVAL_S = 0.00005
# While the sampler walks the training thread's frames, no other thread is to be handed the GIL:
# a walk that lets the training thread run on reads frames it is tearing down (CPython 3.11: a
# segmentation fault in `_walk`, seen in a CI run; a frame's f_back read as a dict, seen once in
# 180 runs). A walk takes microseconds; a thread that starts waiting for the GIL meanwhile asks
# for it only after this long, by when the walk is over and the interval put back.
WALK_SWITCH_INTERVAL_S = 1.0
MAX_SAMPLES = 200_000  # later samples are dropped (a note says so); hours of measured steps
MAX_TRANSITIONS = 400  # phase transitions whose callers are recorded (a few per step)
# Transitions in a row on call paths already seen after which the training callers are taken as
# known and the listener leaves the step's path (a loop's paths repeat from its second step on;
# walking the stack at every transition was a third of the probes' calls on a short step)
SETTLED_TRANSITIONS = 48
# ... or after this many whole steps in a row whose every transition was on a path already seen,
# whichever comes first: a step of four or five transitions (forward, backward, optimizer, data)
# took twelve steps to reach 48, and with the default 3 warm-up steps the walks (a stack walk a
# transition, ~1,500 bytecode instructions a step on bench/diagnose_overhead.py's many_modules)
# ran in half of the 20 measured steps (round 16)
SETTLED_STEPS = 3
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
# what a code object is to the sampler (cached per code object)
_LIBRARY, _USER, _MACHINERY = 0, 1, 2  # _MACHINERY: our wrappers, never named as the callee


def sampling_interval(taken: int) -> float:
    """Seconds to wait for the next sample once `taken` samples were kept."""
    return INTERVAL_S * max(1.0, taken / FULL_RATE_SAMPLES)


def line_at(code, offset: int) -> int:
    """The source line of the instruction at byte `offset` of `code` (what `f_lineno` says);
    an instruction with no line (Python 3.11+) gets its function's first line."""
    for start, end, line in code.co_lines():
        if start <= offset < end:
            return line or code.co_firstlineno
    return code.co_firstlineno


def is_user_file(filename: str) -> bool:
    """The program's own code: not torch, installed packages, the standard library, torchdoctor's
    machinery or generated code ("<string>", "<frozen ...>")."""
    if filename.startswith("<") or is_library_file(filename):
        return False
    return not filename.startswith(_LIBRARY_ROOTS) and not any(p in filename for p in _PACKAGES)


class LineSampler(Probe):
    def install(self, patcher) -> None:
        # (clock, phase, user frames as code, offset, code, offset..., library codes innermost
        # first, the interval waited): raw, turned into RawSamples after the run
        self.samples: list[tuple] = []
        self.dropped = 0
        self._kind: dict = {}  # code object -> _USER, _LIBRARY or _MACHINERY
        # the frames above diagnose_script: a walk ends there (pytest's test function, in a user
        # file, was on every chain of an in-process diagnosis; its name made acting "validation")
        self._callers = self.session.caller_frames
        self._lines: dict = {}  # (code, offset) -> line
        # the thread whose lines are sampled: the one that enters the training phases (a
        # program may train in a thread of its own while its main thread waits in join())
        self._training_thread = threading.get_ident()
        # user lines that call into training compute (the loop, a train_step() call), seen at
        # phase transitions: they hold the model's work, they are not hot spots themselves
        self.training_callers: set[tuple[str, int]] = set()
        self._transitions_left = MAX_TRANSITIONS
        self._paths_seen: set[tuple] = set()  # call paths already walked at a transition
        self._repeats = 0  # transitions in a row whose path was already seen
        self._repeats_from = 0  # the step (index) where they began
        self.tracker.phase_listeners.append(self._phase_started)
        self._stop = threading.Event()
        self._switch_interval = sys.getswitchinterval()
        sys.setswitchinterval(min(self._switch_interval, SWITCH_INTERVAL_S))
        self._thread = threading.Thread(target=self._run, name="torchdoctor-lines", daemon=True)
        self._thread.start()

    def _kind_of(self, code) -> int:
        filename = code.co_filename
        if is_user_file(filename):
            kind = _USER
        else:
            kind = _MACHINERY if filename.startswith(_OURS) else _LIBRARY
        self._kind[code] = kind
        return kind

    def _phase_started(self, phase: str) -> None:
        if phase not in TRAINING_PHASES:
            return
        self._transitions_left -= 1
        self._training_thread = threading.get_ident()
        frame = sys._getframe(1)
        # The same call path again (the loop's lines, every step) adds nothing: it is known by
        # its (code, instruction) pairs, which is what a walk reads.
        users, _ = self._walk(frame)
        del frame
        if users in self._paths_seen:
            self._repeats += 1
            if self._repeats == 1:
                self._repeats_from = self.tracker.index
            if (
                self._repeats >= SETTLED_TRANSITIONS
                or self._transitions_left <= 0
                # the steps between the first repeat's and this one's repeated every path
                or self.tracker.index - self._repeats_from > SETTLED_STEPS
            ):
                self._stop_listening()
            return
        self._repeats = 0
        if self._transitions_left <= 0:
            self._stop_listening()
        self._paths_seen.add(users)
        self.training_callers.update((c.co_filename, line) for c, line in self._user_lines(users))

    def _stop_listening(self) -> None:
        self.tracker.remove_phase_listener(self._phase_started)

    def stop(self) -> None:
        self._stop_listening()
        self._stop.set()
        sys.setswitchinterval(self._switch_interval)
        self._thread.join(timeout=1.0)

    def _run(self) -> None:
        current_frames = sys._current_frames
        getswitchinterval, setswitchinterval = sys.getswitchinterval, sys.setswitchinterval
        clock = time.perf_counter
        tracker = self.tracker
        session = self.session
        samples = self.samples
        interval = INTERVAL_S
        while not self._stop.wait(interval):
            if not session.measuring:
                continue
            frame = current_frames().get(self._training_thread)
            if frame is None:
                continue
            stack = tracker.stack
            # tracker.closing: the training thread is closing a step: our time, not theirs
            phase = OURS if tracker.closing else stack[-1] if stack else "other"
            if len(samples) >= MAX_SAMPLES:
                self.dropped += 1
                continue
            switch_interval = getswitchinterval()
            setswitchinterval(WALK_SWITCH_INTERVAL_S)
            try:
                walked = self._walk(frame)
            except AttributeError:  # a frame torn down mid-walk all the same (see
                continue  # WALK_SWITCH_INTERVAL_S): one sample lost, not the thread
            finally:
                setswitchinterval(switch_interval)
            samples.append((clock(), phase, *walked, interval))
            del frame
            interval = sampling_interval(len(samples))

    def _walk(self, frame) -> tuple[tuple, tuple]:
        """(the user frames, innermost first, as code, offset, code, offset..., up to the frames
        that called diagnose_script; the library code objects below the innermost user frame,
        innermost first). Runs with the GIL held while the training thread may wait for it:
        dictionary and set look-ups only."""
        kinds = self._kind
        callers = self._callers
        users: list = []
        below: list = []
        while frame is not None:
            code = frame.f_code
            kind = kinds.get(code)
            if kind is None:
                kind = self._kind_of(code)
            if kind == _USER:
                if id(frame) in callers:
                    break
                users.append(code)
                users.append(frame.f_lasti)
                if len(users) == 2 * MAX_CHAIN:
                    break
            elif not users and kind == _LIBRARY:
                below.append(code)
            frame = frame.f_back
        return tuple(users), tuple(below)

    def _user_lines(self, users: tuple) -> tuple:
        """((code, line), ...) from a walk's (code, offset, ...)."""
        lines = self._lines
        found = []
        for i in range(0, len(users), 2):
            key = (users[i], users[i + 1])
            line = lines.get(key)
            if line is None:
                line = lines[key] = line_at(*key)
            found.append((key[0], line))
        return tuple(found)

    def raw_samples(self) -> list[RawSample]:
        """The samples as build_lines reads them: user frames as (code, line), the library code
        the innermost user line called outermost first (at most MAX_CALLEES)."""
        return [
            (t, phase, self._user_lines(users), below[-MAX_CALLEES:][::-1], interval)
            for t, phase, users, below, interval in self.samples
        ]

    def contribute(self, run, measured) -> None:
        windows = [(r.start, r.end, r.wall) for r in measured]
        run.lines = build_lines(
            self.raw_samples(),
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
