"""Diagnose's overhead on a program's steady-state step, from the clock in sitecustomize.py.

`clocked(env, folder)` gives the environment that arms the clock for one run and a function that
reads what the run recorded; `overhead(plain_runs, diagnosed_runs)` compares the two sides on the
same steps.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import statistics
from collections.abc import Callable, Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
MIN_INTERVALS = 5  # fewer steady steps than this in common: no ratio

Readings = list[list[float]]  # [[wall, cpu], ...] at each step of one optimizer


@contextlib.contextmanager
def clocked(env: dict, folder: Path) -> Iterator[tuple[dict, Callable[[], Readings]]]:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    path = os.pathsep.join(filter(None, [str(HERE), env.get("PYTHONPATH", "")]))
    yield {**env, "PYTHONPATH": path, "TD_STEP_CLOCK_DIR": str(folder)}, lambda: _read(folder)


def _read(folder: Path) -> Readings:
    """The program's training optimizer: in each process, the one that stepped first (what-if
    copies step later); across processes (workers of torchrun, side runs), the longest."""
    best: Readings = []
    for file in folder.glob("*.steps"):
        optimizers: dict[str, Readings] = {}
        for line in file.read_text().splitlines():
            optimizer, wall, cpu = line.split()
            optimizers.setdefault(optimizer, []).append([float(wall), float(cpu)])
        first = min(optimizers.values(), key=lambda readings: readings[0][0])
        if len(first) > len(best):
            best = first
    return best


def _median_interval(readings: Readings, start: int, stop: int) -> tuple[float, float]:
    window = readings[start:stop]
    walls = [b[0] - a[0] for a, b in zip(window, window[1:])]
    cpus = [b[1] - a[1] for a, b in zip(window, window[1:])]
    return statistics.median(walls), statistics.median(cpus)


def overhead(plain_runs: list[Readings], diagnosed_runs: list[Readings]) -> dict | None:
    """Diagnosed / plain median step interval (wall and process CPU) over the steps both sides
    ran, skipping the first fifth (at least 2) as warm-up; None when too few steps are common."""
    runs = [r for r in plain_runs + diagnosed_runs if r]
    if len(runs) != len(plain_runs) + len(diagnosed_runs):
        return None
    steps = min(len(r) for r in runs)
    start = max(2, steps // 5)
    if steps - start - 1 < MIN_INTERVALS:
        return None
    plain = [_median_interval(r, start, steps) for r in plain_runs]
    diagnosed = [_median_interval(r, start, steps) for r in diagnosed_runs]

    def ratio(side: int) -> float | None:
        base = statistics.median(m[side] for m in plain)
        return statistics.median(m[side] for m in diagnosed) / base if base > 0 else None

    return {
        "steps": steps - start,
        "plain_step_ms": round(1e3 * statistics.median(m[0] for m in plain), 3),
        "wall": ratio(0),
        "cpu": ratio(1),
    }


def describe(result: dict | None) -> str:
    if not result:
        return "-"
    cpu = f"{result['cpu']:.2f}" if result["cpu"] else "-"
    wall = f"{result['wall']:.2f}" if result["wall"] else "-"
    return f"{cpu} ({wall}) over {result['steps']} steps of {result['plain_step_ms']:.1f} ms"
