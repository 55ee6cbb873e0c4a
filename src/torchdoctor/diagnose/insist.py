"""Stop a program that swallowed StopDiagnosis (a bare `except:` or `except BaseException:`
around its step, e.g. "skip bad batches"): without this, diagnose would run its whole training.

Once a swallowed stop is seen (another step ended after it), every frame of the program's own
code gets a line tracer that raises StopDiagnosis at the next line it runs. The first such line
is usually the handler that just caught our exception, and an exception raised there leaves the
`try` statement, so it unwinds to the runner. CPython switches tracing off when a tracer raises,
so a second catching layer gets the same treatment at the next step end (the session calls
`insist` again). The tracer that was set before (a debugger, coverage) is put back afterwards.
"""

from __future__ import annotations

import sys

from torchdoctor.diagnose.callsite import is_library_file


class StopInsister:
    def __init__(self, stop_exception: type[BaseException]) -> None:
        self.stop_exception = stop_exception
        self.active = False
        self._saved_trace = None

    def _raise_at_line(self, frame, event, arg):
        if event == "line":
            raise self.stop_exception
        return self._raise_at_line

    def _on_call(self, frame, event, arg):
        if is_library_file(frame.f_code.co_filename):
            return None
        return self._raise_at_line

    def insist(self) -> None:
        """Arm the tracers on the program's frames now on the stack and on new ones."""
        if not self.active:
            self._saved_trace = sys.gettrace()
            self.active = True
        frame = sys._getframe(1)
        while frame is not None:
            if not is_library_file(frame.f_code.co_filename):
                frame.f_trace = self._raise_at_line
            frame = frame.f_back
        sys.settrace(self._on_call)

    def release(self) -> None:
        if self.active:
            sys.settrace(self._saved_trace)
            self.active = False
