"""The program's recursion limit, counted from its own first frame.

Python's recursion limit counts every frame on the stack, and under diagnose the program runs
beneath ours (the CLI, the runner: a few dozen frames that `python script.py` does not have). A
program that sets a tight limit (`sys.setrecursionlimit(120)` before a recursive model or
parser) or recurses close to the default 1000 would get a RecursionError only under diagnose.
While it runs, the limit Python enforces is the program's plus our frames' depth (and a few
frames of our wrappers at a root module call or a wrapped torch function, and half again for
torch's longer module-call path while our hooks are on), and the program's
`sys.setrecursionlimit` / `sys.getrecursionlimit` speak in its own numbers. Its end puts our
limit back: a program that left a tight one must not break the report.
"""

from __future__ import annotations

import sys

from torchdoctor.intercept.patching import Patcher

# our frames a program's call can pass through: a root module call's timing wrapper, a wrapped
# torch function or tensor method (`.item()`), a --try hook
WRAPPER_FRAMES = 10
# per level of nested module calls: torch's slow call path while global module hooks are on
# (ours) has one frame more than its fast path (4 a level instead of 3); room for that, in
# proportion, so a program's runaway recursion still ends in its RecursionError
NESTED_CALL_ROOM = 1.5


def _depth(frame) -> int:
    depth = 0
    while frame is not None:
        depth += 1
        frame = frame.f_back
    return depth


class RecursionRoom:
    """Made in the frame that calls into the program (the runner's), before it does."""

    def __init__(self, patcher: Patcher) -> None:
        # the program's first frame sits one frame below the caller's (plainly, at depth 1: its
        # module, or runpy's first frame for -m, which the runner calls as Python does)
        offset = _depth(sys._getframe(1)) + WRAPPER_FRAMES
        self.saved = sys.getrecursionlimit()
        self.program_limit = self.saved  # what the program set, or Python's default

        def enforced(limit: int) -> int:
            return int(limit * NESTED_CALL_ROOM) + offset

        def make_set(real):
            def setrecursionlimit(limit):
                if not isinstance(limit, int) or limit < 1:
                    return real(limit)  # Python's own TypeError / ValueError
                real(enforced(limit))
                self.program_limit = limit

            return setrecursionlimit

        def make_get(real):
            return lambda: self.program_limit

        sys.setrecursionlimit(enforced(self.saved))
        patcher.replace(sys, "setrecursionlimit", make_set)
        patcher.replace(sys, "getrecursionlimit", make_get)

    def restore(self) -> None:
        """After the patches are off: our own limit again."""
        sys.setrecursionlimit(self.saved)
