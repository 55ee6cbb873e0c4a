"""How many CPU cores this process may use: the one place every part of torchdoctor asks (worker
counts tried and timed, the environment in the report, the Trainer's loaders, the demo), so a
machine unlike ours is one answer to check, and one to fake in a test."""

from __future__ import annotations

import os


def usable_cores() -> int:
    """Cores this process may run on: the affinity mask where the OS has one (Linux: a
    container's or `taskset`'s CPU set, not the machine's total), else the machine's count."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1  # macOS, Windows
