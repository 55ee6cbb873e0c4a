"""The process's own memory, measured the same way by diagnose, the trial worker and the Trainer."""

from __future__ import annotations

import ctypes
import resource
import sys


def peak_rss_bytes() -> int:
    """Peak resident set size of this process so far, in bytes (getrusage reports KiB on Linux
    and bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd",
            "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost",
        )
    ]  # fmt: skip


def _mallinfo2():
    try:
        function = ctypes.CDLL(None).mallinfo2  # glibc 2.33 and later
    except (OSError, AttributeError):
        return None
    function.restype = _MallInfo2
    function.argtypes = []
    return function


_MALLINFO2 = _mallinfo2() if sys.platform.startswith("linux") else None


def heap_in_use_bytes() -> int | None:
    """Bytes the C heap has handed out and not taken back (glibc's `mallinfo2`: chunks in use in
    every arena plus mmapped chunks), or None off glibc. Unlike the resident set, it falls when
    tensors are freed: memory the allocator keeps for reuse (the high-water mark of a step's
    activations) is resident but not in use. It walks the arenas' free lists: tens of
    microseconds, for a few readings, not one per step."""
    if _MALLINFO2 is None:
        return None
    info = _MALLINFO2()
    return int(info.uordblks + info.hblkhd)
