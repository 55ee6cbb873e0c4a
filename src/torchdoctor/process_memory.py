"""The process's own memory, measured the same way by diagnose, the trial worker and the Trainer."""

from __future__ import annotations

import resource
import sys


def peak_rss_bytes() -> int:
    """Peak resident set size of this process so far, in bytes (getrusage reports KiB on Linux
    and bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)
