"""Host I/O probe: `torch.save`, `print()` (and `pprint.pprint`), emitted `logging` records and
shown warnings inside training steps, counted and timed (a clock read either side of each call).

Formatting tensors for a log line (`Tensor.__format__` / `__repr__`, run by an f-string *before*
print() is called) is timed too: that is where most of a logging line's cost hides. Formatting
inside a timed call (print(tensor), a logging record's `%s` of a tensor) is in that call's time
already and is not counted twice.
"""

from __future__ import annotations

import builtins
import logging
import pprint
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from types import FrameType

import torch

from torchdoctor.diagnose.callsite import user_location
from torchdoctor.diagnose.observations import IOObservation
from torchdoctor.diagnose.probes.base import Probe, per_step
from torchdoctor.intercept.patching import transforming
from torchdoctor.intercept.warning_source import see_through


class IOProbe(Probe):
    def install(self, patcher) -> None:
        self.locations: dict[str, int] = {}
        self.writes: set[str] = set()  # locations of print and logging calls (not torch.save)
        self.stdout = sys.stdout  # where our report goes after the program
        patcher.replace(torch, "save", lambda original: self._timed(original, "save"))
        patcher.replace(builtins, "print", lambda original: self._timed_print(original))
        # pprint writes to the stream itself, not through print(): a metrics dict pretty-printed
        # every step (its tensors' reprs included) is a print too
        patcher.replace(pprint, "pprint", lambda original: self._timed(original, "print"))
        # records below the logger's level never reach _log: only emitted ones are timed, and
        # booked to the user's line past the logging module's frames
        patcher.replace(
            logging.Logger,
            "_log",
            lambda original: self._timed(_past_our_frames(original), "log", _log_caller),
        )
        # a warning shown (warnings.warn with a filter that lets it through every time: the
        # program's way of logging, to stderr) is a log record too; C's warn() looks this
        # module attribute up at each warning it shows, so both warn() and warn_explicit() pass
        if hasattr(warnings, "_showwarnmsg"):
            patcher.replace(warnings, "_showwarnmsg", self._timed_warning)
        self.depth = 0  # inside a timed call: formatting there is part of its time
        for method in ("__format__", "__repr__"):
            patcher.replace(torch.Tensor, method, self._timed_format)

    def _timed_warning(self, original):
        timed = self._timed(original, "log")
        see_through(timed.__code__)  # the warning's place is found past this wrapper
        return timed

    def _timed_format(self, original):
        probe = self

        def formatted(tensor, *args, **kwargs):  # __repr__(*, tensor_contents=None)
            if probe.session.formatting_tensor or probe.depth or transforming():
                # __format__ calling __repr__ (time the outer one), inside a timed print or
                # logging call (timed there), or traced by dynamo
                return original(tensor, *args, **kwargs)
            probe.session.formatting_tensor = True
            started = time.perf_counter()
            try:
                return original(tensor, *args, **kwargs)
            finally:
                probe.session.formatting_tensor = False
                counters = probe.tracker.counters
                counters["format_s"] = counters.get("format_s", 0) + time.perf_counter() - started

        return formatted

    def _timed_print(self, original):
        """print() timed; also remembers whether the program left our stdout mid-line (a
        progress line printed with end="" or "\r"): the report must start on a new line."""
        timed = self._timed(original, "print")
        probe = self

        def print_(*args, **kwargs):
            try:
                return timed(*args, **kwargs)
            finally:
                end = kwargs.get("end")
                end = "\n" if end is None else end
                if (args or end) and (kwargs.get("file") or sys.stdout) is probe.stdout:
                    probe.session.stdout_mid_line = not end.endswith("\n")

        return print_

    def _timed(self, original, kind: str, caller: Callable[[], str] | None = None):
        """`original` timed and counted as `kind`; `caller()`: the user's line that called it
        (default: the line calling `original` itself)."""
        probe = self
        where: Callable[[], str] = caller or (lambda: user_location(3))

        def timed(*args, **kwargs):
            if transforming() or probe.depth:  # print inside a logging handler: timed there
                return original(*args, **kwargs)
            probe.depth += 1
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                probe.depth -= 1
                counters = probe.tracker.counters  # the step may have changed
                counters[kind + "s"] = counters.get(kind + "s", 0) + 1
                counters[kind + "_s"] = counters.get(kind + "_s", 0) + time.perf_counter() - started
                if probe.session.measuring:
                    location = where()
                    probe.locations[location] = probe.locations.get(location, 0) + 1
                    if kind != "save":
                        probe.writes.add(location)

        return timed

    def contribute(self, run, measured) -> None:
        run.io = IOObservation(
            saves_in_steps=round(sum(r.counters.get("saves", 0) for r in measured)),
            save_s_per_step=per_step(measured, "save_s"),
            prints_per_step=per_step(measured, "prints"),
            print_s_per_step=per_step(measured, "print_s"),
            tensor_format_s_per_step=per_step(measured, "format_s"),
            log_records_per_step=per_step(measured, "logs"),
            log_s_per_step=per_step(measured, "log_s"),
            locations=sorted(self.locations, key=lambda k: -self.locations[k])[:10],
            write_locations=sorted(self.writes, key=lambda k: -self.locations.get(k, 0))[:10],
            save_s_per_step_typical=typical_per_step(measured, ("save_s",)),
            write_s_per_step_typical=typical_per_step(measured, ("print_s", "log_s", "format_s")),
        )


def typical_per_step(measured, counters: tuple[str, ...]) -> float:
    """Seconds per step in `counters` (summed) with every step that had some at the median of
    those steps (the lower middle one: of two, a stalled one is not averaged in): as many such
    steps as there were, each at its typical cost."""
    seconds = [sum(r.counters.get(c, 0.0) for c in counters) for r in measured]
    spent = sorted(s for s in seconds if s > 0)
    if not spent:
        return 0.0
    return statistics.median_low(spent) * len(spent) / len(measured)


def _past_our_frames(log: Callable) -> Callable:
    """`Logger._log` asked to look 2 frames further for the record's place (this one and the
    timed wrapper's; logging skips its own): its filename, lineno and funcName, which a log
    format shows, are the program's line, not our wrapper's."""

    def log_past_us(logger, level, msg, args, exc_info=None, extra=None, stack_info=False,
                    stacklevel=1):  # fmt: skip
        return log(logger, level, msg, args, exc_info, extra, stack_info, stacklevel + 2)

    return log_past_us


def _log_caller() -> str:
    """The user's line behind a logging call: past the logging module's own frames."""
    depth = 2  # 0: here, 1: the timed wrapper, 2: Logger.info & co.
    frame: FrameType | None = sys._getframe(depth)
    while frame is not None and frame.f_code.co_filename == logging.__file__:
        frame, depth = frame.f_back, depth + 1
    return user_location(depth + 1)
