"""Busy-loop processes pinned to one core: the contention a busy machine puts on a training
thread pinned beside them (bench/sampler_contention.py, bench/false_alarms.py)."""

from __future__ import annotations

import subprocess
import sys


def busy_loops(count: int, core: int) -> list[subprocess.Popen]:
    code = f"import os\nos.sched_setaffinity(0, {{{core}}})\nwhile True: pass"
    return [subprocess.Popen([sys.executable, "-c", code]) for _ in range(count)]


def stop(loops: list[subprocess.Popen]) -> None:
    for process in loops:
        process.kill()
        process.wait()
